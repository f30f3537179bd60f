import fs from 'node:fs';
import path from 'node:path';
import { ZGatewayEnv } from '@platform/gateway/testing';
import { ZPaymentEnv } from '@platform/payment/testing';
import type { z } from 'zod';
import {
  containerEnvironment,
  interpolate,
  ROOT,
  rawEnvironment,
  readCompose,
  readEnvExample,
  referencedNames,
} from './support/compose';

// The compose file, .env.example and the services' env schemas are written by
// different people at different times; these checks keep them agreeing.

type EnvSchema = z.ZodObject<Record<string, z.ZodType>>;

const SERVICES: Array<{ name: string; schema: EnvSchema; port: number }> = [
  { name: 'payment', schema: ZPaymentEnv as unknown as EnvSchema, port: 3001 },
  { name: 'gateway', schema: ZGatewayEnv as unknown as EnvSchema, port: 3002 },
];

/** Variables a container has no use for: the image sets HOST, and DATA_DIR is the embedded-database folder. */
const NOT_FOR_CONTAINERS = new Set(['HOST', 'DATA_DIR']);

/** Keys without a default that are not optional: the service refuses to start without them. */
function requiredKeys(schema: EnvSchema): string[] {
  return Object.entries(schema.shape)
    .filter(([, field]) => !field.safeParse(undefined).success)
    .map(([key]) => key);
}

const { text: composeText, file: compose } = readCompose();

/** The Dockerfile stage that sets a service's port (`FROM runtime-common AS runtime-<name>`). */
function runtimeStage(name: string): string {
  const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^(?=FROM )/m);
  return stages.find((stage) => stage.startsWith(`FROM runtime-common AS runtime-${name}\n`)) ?? '';
}
const envExample = readEnvExample();

describe('.env.example', () => {
  it('defines and documents every variable docker-compose.yml substitutes', () => {
    const used = [...new Set(referencedNames(composeText))];
    const missing = used.filter((name) => !envExample.has(name));
    const undocumented = used.filter((name) => envExample.has(name) && !envExample.get(name)?.documented);
    expect({ missing, undocumented }).toEqual({ missing: [], undocumented: [] });
    expect(used.length).toBeGreaterThan(10);
  });

  it('holds no variable that docker-compose.yml never reads', () => {
    const used = new Set(referencedNames(composeText));
    expect([...envExample.keys()].filter((name) => !used.has(name))).toEqual([]);
  });
});

describe.each(SERVICES)('docker-compose.yml: $name', ({ name, schema, port }) => {
  const service = compose.services[name];
  if (!service) throw new Error(`docker-compose.yml has no service ${name}`);
  const written = rawEnvironment(service);
  const env = containerEnvironment(service, envExample);

  it('provides every required variable of the env schema', () => {
    const required = requiredKeys(schema);
    expect(required.length).toBeGreaterThan(0);
    expect(required.filter((key) => !env.has(key))).toEqual([]);
  });

  it('sets only variables the env schema knows (no typos)', () => {
    const known = new Set(Object.keys(schema.shape));
    expect([...written.keys()].filter((key) => !known.has(key))).toEqual([]);
  });

  it('wires every variable of the env schema, so each can be set from .env', () => {
    const missing = Object.keys(schema.shape).filter(
      (key) => !NOT_FOR_CONTAINERS.has(key) && !written.has(key),
    );
    expect(missing).toEqual([]);
  });

  it('gives an environment the schema accepts in production, with .env.example as .env', () => {
    expect(env.get('NODE_ENV')).toBe('production');
    const cleaned = Object.fromEntries([...env].filter(([, value]) => value !== ''));
    const result = schema.safeParse(cleaned);
    const problems = result.success
      ? []
      : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(problems).toEqual([]);
  });

  it('trusts exactly the one proxy hop in front of it', () => {
    expect(env.get('TRUST_PROXY_HOPS')).toBe('1');
  });

  it('is built from the one Dockerfile with APP set to it', () => {
    expect(service.build).toEqual({
      context: '.',
      dockerfile: 'Dockerfile',
      target: 'runtime',
      args: { APP: name },
    });
  });

  it('listens on the port its image exposes and the proxy forwards to', () => {
    const stage = runtimeStage(name);
    expect(stage).toContain(`EXPOSE ${port}`);
    expect(stage).toContain(`PORT=${port}`);
    expect(env.get('PORT')).toBe(String(port));
    const proxyEnv = rawEnvironment(compose.services.proxy ?? {});
    expect(proxyEnv.get(`${name.toUpperCase()}_UPSTREAM`)).toBe(`${name}:${port}`);
  });

  it('starts after its migrate job finished and its stores are healthy', () => {
    expect(service.depends_on).toMatchObject({
      [`${name}-migrate`]: { condition: 'service_completed_successfully' },
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
    // The service's own image runs the project's migration runner: nothing is downloaded.
    const migrate = compose.services[`${name}-migrate`];
    expect(migrate?.build).toEqual(service.build);
    expect(migrate?.image).toBe(service.image);
    expect(migrate?.command).toEqual(['node', '../../packages/db/dist/migrate-deploy.js']);
  });
});

describe('redis', () => {
  it("runs as the image's unprivileged user, not root", () => {
    const redis = compose.services.redis ?? {};
    // The image's entrypoint drops root only for a bare redis-server command.
    expect(redis.user).toBe('redis');
  });
});

describe('proxy', () => {
  const template = fs.readFileSync(path.join(ROOT, 'infra/proxy/templates/default.conf.template'), 'utf8');
  const proxy = compose.services.proxy ?? {};

  it('gets a value for every variable of the nginx template', () => {
    const variables = [...new Set([...template.matchAll(/\$\{([A-Z][A-Z0-9_]*)\}/g)].map((m) => m[1]))];
    const env = containerEnvironment(proxy, envExample);
    expect(variables.filter((name) => !env.get(name as string))).toEqual([]);
  });

  it('starts once both services are healthy', () => {
    expect(proxy.depends_on).toMatchObject({
      payment: { condition: 'service_healthy' },
      gateway: { condition: 'service_healthy' },
    });
  });

  it("serves the gateway's public URL, over HTTPS", () => {
    const gatewayEnv = containerEnvironment(compose.services.gateway ?? {}, envExample);
    const proxyEnv = containerEnvironment(proxy, envExample);
    const publicUrl = new URL(gatewayEnv.get('GATEWAY_PUBLIC_URL') ?? '');
    expect(publicUrl.protocol).toBe('https:');
    expect(publicUrl.hostname).toBe(proxyEnv.get('GATEWAY_SERVER_NAME'));
    expect(publicUrl.port).toBe(envExample.get('PROXY_TLS_PORT')?.value);
    // Redirects from plain HTTP point at the same published port.
    expect(proxyEnv.get('PROXY_HTTPS_PORT')).toBe(publicUrl.port);
    expect(proxy.ports).toEqual(
      expect.arrayContaining([
        `\${PROXY_TLS_PORT:-8443}:${proxyEnv.get('PROXY_TLS_LISTEN')}`,
        `\${PROXY_PORT:-8080}:${proxyEnv.get('PROXY_LISTEN')}`,
      ]),
    );
  });

  it('reads the certificate and key from the mounted TLS folder', () => {
    const proxyEnv = containerEnvironment(proxy, envExample);
    const vars = new Map([...envExample].map(([key, entry]) => [key, entry.value]));
    const mounts = (proxy.volumes ?? []).map((v) => interpolate(v, vars).split(':'));
    const tlsMount = mounts.find(([, target]) => target === '/etc/nginx/tls');
    expect(tlsMount).toEqual([envExample.get('TLS_DIR')?.value, '/etc/nginx/tls', 'ro']);
    expect(path.dirname(proxyEnv.get('TLS_CERTIFICATE') ?? '')).toBe('/etc/nginx/tls');
    expect(path.dirname(proxyEnv.get('TLS_CERTIFICATE_KEY') ?? '')).toBe('/etc/nginx/tls');
  });
});

describe('mailpit', () => {
  it('starts only with the dev profile, and no production service waits for it', () => {
    expect(compose.services.mailpit?.profiles).toEqual(['dev']);
    const dependants = Object.entries(compose.services)
      .filter(([, svc]) => !svc.profiles && JSON.stringify(svc.depends_on ?? {}).includes('mailpit'))
      .map(([svcName]) => svcName);
    expect(dependants).toEqual([]);
  });
});
