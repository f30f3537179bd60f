import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ZGatewayEnv } from '@platform/gateway/testing';
import { ZPaymentEnv } from '@platform/payment/testing';
import { databasePoolSize } from '@platform/service-kit';
import type { z } from 'zod';
import { containerEnvironment, ROOT, readCompose, readEnvExample } from './support/compose';
import { type K8sObject, renderKustomization } from './support/kustomize';

// The Kubernetes manifests (infra/k8s) are rendered the way `kubectl
// kustomize` renders them, validated against the API schemas offline, and
// checked against what the services need: their production env variables,
// ports, probes, shutdown deadline and the proxy settings the compose proxy
// uses too.

type EnvSchema = z.ZodObject<Record<string, z.ZodType>>;
type Container = {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: Array<{
    name: string;
    value?: string;
    valueFrom?: {
      secretKeyRef?: { name: string; key: string };
      configMapKeyRef?: { name: string; key: string };
    };
  }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  securityContext?: {
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
};
type PodSpec = {
  containers: Container[];
  initContainers?: Container[];
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  volumes?: Array<{ name: string; emptyDir?: object }>;
  restartPolicy?: string;
};
type PodTemplate = { metadata: { labels: Record<string, string> }; spec: PodSpec };
type Workload = K8sObject & {
  spec: {
    template: PodTemplate;
    selector?: { matchLabels: Record<string, string> };
    strategy?: { rollingUpdate?: { maxSurge?: number } };
  };
};

/** Postgres' default max_connections, less 10 for the migrate Jobs, backups and an operator's psql. */
const POSTGRES_CONNECTIONS_FOR_SERVICES = 100 - 10;

/** How long runServer lets in-flight requests run after SIGTERM (its drainMs default, packages/logging/src/server.ts). */
const DRAIN_SECONDS = 10;
/** Closing Prisma, Redis, mailers and flushing usage rows after the drain. */
const CLOSE_MARGIN_SECONDS = 5;

const OVERLAY = path.join(ROOT, 'infra', 'k8s', 'overlays', 'example');
const BASE = path.join(ROOT, 'infra', 'k8s', 'base');
const objects = renderKustomization(OVERLAY);

const SERVICES: Array<{ name: 'payment' | 'gateway'; schema: EnvSchema }> = [
  { name: 'payment', schema: ZPaymentEnv as unknown as EnvSchema },
  { name: 'gateway', schema: ZGatewayEnv as unknown as EnvSchema },
];

function find<T extends K8sObject = K8sObject>(kind: string, name: string): T {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`the overlay renders no ${kind} ${name}`);
  return found as T;
}
const ofKind = <T extends K8sObject = K8sObject>(kind: string) =>
  objects.filter((o) => o.kind === kind) as T[];
type CronWorkload = K8sObject & {
  spec: { schedule: string; concurrencyPolicy?: string; jobTemplate: { spec: Workload['spec'] } };
};
/** Every object that runs pods: Deployments, Jobs, and the Jobs CronJobs make (as `{metadata, spec}` of their job template). */
const podWorkloads = (): Workload[] => [
  ...ofKind<Workload>('Deployment'),
  ...ofKind<Workload>('Job'),
  ...ofKind<CronWorkload>('CronJob').map((c) => ({ ...c, spec: c.spec.jobTemplate.spec }) as Workload),
];

function validate(list: K8sObject[]): Array<{ id: string; error: string }> {
  const result = spawnSync(process.execPath, [path.join(__dirname, 'support', 'validate-k8s.mjs')], {
    cwd: __dirname,
    input: JSON.stringify(list),
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`validate-k8s.mjs failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Array<{ id: string; error: string }>;
}

/**
 * Variables the service refuses to start without under NODE_ENV=production:
 * starting from a complete production environment (compose's, with
 * .env.example as .env, which e2e/test/config.test.ts shows the schema accepts),
 * each variable whose removal makes the schema complain about it.
 */
function requiredInProduction(name: string, schema: EnvSchema): string[] {
  const { file } = readCompose();
  const full = containerEnvironment(file.services[name] ?? {}, readEnvExample());
  const complete = Object.fromEntries([...full].filter(([, value]) => value !== ''));
  if (!schema.safeParse(complete).success)
    throw new Error(`compose's ${name} environment is not a valid start`);
  return Object.keys(complete).filter((key) => {
    const { [key]: _left, ...rest } = complete;
    const result = schema.safeParse(rest);
    return !result.success && result.error.issues.some((issue) => issue.path[0] === key);
  });
}

/** Every variable a container gets, with where it comes from. */
function environment(container: Container): Map<string, { value?: string; secret?: string }> {
  const env = new Map<string, { value?: string; secret?: string }>();
  for (const source of container.envFrom ?? []) {
    if (source.secretRef)
      throw new Error('envFrom secretRef hides which variables a pod gets; use secretKeyRef');
    const configMap = find('ConfigMap', source.configMapRef?.name ?? '') as K8sObject & {
      data?: Record<string, string>;
    };
    for (const [key, value] of Object.entries(configMap.data ?? {})) env.set(key, { value });
  }
  for (const entry of container.env ?? []) {
    const secret = entry.valueFrom?.secretKeyRef;
    env.set(entry.name, secret ? { secret: `${secret.name}/${secret.key}` } : { value: entry.value });
  }
  return env;
}

/** The port the image of a service listens on (its Dockerfile runtime stage). */
function imagePort(name: string): number {
  const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const stage = dockerfile
    .split(/^(?=FROM )/m)
    .find((s) => s.startsWith(`FROM runtime-common AS runtime-${name}\n`));
  return Number(/^EXPOSE (\d+)$/m.exec(stage ?? '')?.[1]);
}

const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

const SECRET_NAME = /(SECRET|_KEY|_KEYS|PASSWORD|DATABASE_URL|REDIS_URL|SMTP_URL)$/;

describe('infra/k8s', () => {
  it('renders the example overlay and the base into objects that pass the Kubernetes API schemas', () => {
    expect(objects.map((o) => o.kind).sort()).toEqual(
      [
        ...['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Job', 'PodDisruptionBudget', 'Service'],
        ...['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Job', 'PodDisruptionBudget', 'Service'],
        ...['Ingress', 'Ingress', 'Ingress', 'Ingress', 'Namespace', 'NetworkPolicy', 'NetworkPolicy'],
        // payment: Stripe reconciliation (hourly) and usage reconciliation (daily)
        ...['CronJob', 'CronJob'],
      ].sort(),
    );
    expect(validate(objects)).toEqual([]);
    expect(validate(renderKustomization(BASE))).toEqual([]);
  });

  it('catches an object the schemas refuse', () => {
    const broken = structuredClone(find<Workload>('Deployment', 'payment'));
    (broken.spec.template.spec.containers[0] as unknown as { ports: unknown }).ports = [
      { containerPort: 'http' },
    ];
    expect(validate([broken])).toEqual([
      { id: 'apps/v1/Deployment/payment', error: expect.stringContaining('containerPort must be integer') },
    ]);
  });

  it('puts everything into the overlay namespace, except the Namespace itself', () => {
    const namespaced = objects.filter((o) => o.kind !== 'Namespace');
    expect(new Set(namespaced.map((o) => o.metadata.namespace))).toEqual(new Set(['platform']));
    expect(find('Namespace', 'platform').metadata.namespace).toBeUndefined();
  });

  it('inlines no secret: no Secret objects, no secret-looking variable in a ConfigMap or a literal', () => {
    expect(ofKind('Secret')).toEqual([]);
    const configKeys = ofKind<K8sObject & { data?: Record<string, string> }>('ConfigMap').flatMap((c) =>
      Object.keys(c.data ?? {}),
    );
    expect(configKeys.filter((key) => SECRET_NAME.test(key))).toEqual([]);
    for (const workload of podWorkloads()) {
      for (const container of workload.spec.template.spec.containers) {
        const literals = (container.env ?? []).filter((e) => e.value !== undefined).map((e) => e.name);
        expect(literals.filter((name) => SECRET_NAME.test(name))).toEqual([]);
      }
    }
  });

  it('runs every container non-root, on a read-only root filesystem, without privileges, with resource bounds', () => {
    const workloads = podWorkloads();
    expect(workloads).toHaveLength(6);
    for (const { spec } of workloads) {
      const pod = spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: expect.any(Number) });
      expect(pod.securityContext?.runAsUser).not.toBe(0);
      for (const container of [...pod.containers, ...(pod.initContainers ?? [])]) {
        expect(container.securityContext).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        // Writable scratch space where Node and Prisma expect it.
        const tmp = container.volumeMounts?.find((m) => m.mountPath === '/tmp');
        expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
        expect(container.resources).toEqual({
          requests: { cpu: expect.any(String), memory: expect.any(String) },
          limits: { cpu: expect.any(String), memory: expect.any(String) },
        });
      }
    }
  });

  it('routes both hosts over TLS, with each rule host covered by a certificate Secret', () => {
    const ingresses = ofKind<
      K8sObject & {
        spec: {
          tls: Array<{ hosts: string[]; secretName: string }>;
          rules: Array<{
            host: string;
            http: {
              paths: Array<{ path: string; backend: { service: { name: string; port: { name: string } } } }>;
            };
          }>;
        };
      }
    >('Ingress');
    for (const ingress of ingresses) {
      expect(ingress.metadata.annotations?.['nginx.ingress.kubernetes.io/force-ssl-redirect']).toBe('true');
      for (const rule of ingress.spec.rules) {
        const tls = ingress.spec.tls.find((t) => t.hosts.includes(rule.host));
        expect(tls?.secretName).toMatch(/-tls$/);
        for (const { backend } of rule.http.paths) {
          const service = find<K8sObject & { spec: { ports: Array<{ name: string }> } }>(
            'Service',
            backend.service.name,
          );
          expect(service.spec.ports.map((p) => p.name)).toContain(backend.service.port.name);
        }
      }
    }
    const hosts = new Set(ingresses.flatMap((i) => i.spec.rules.map((r) => r.host)));
    expect(hosts).toEqual(new Set(['payment.example.com', 'gateway.example.com']));
    const publicUrl = new URL(
      (find('ConfigMap', 'gateway-config') as K8sObject & { data: Record<string, string> }).data
        .GATEWAY_PUBLIC_URL ?? '',
    );
    expect(publicUrl.protocol).toBe('https:');
    expect(hosts).toContain(publicUrl.hostname);
  });

  it('streams SSE unbuffered with a long timeout, and waits out AI fallbacks on the other AI paths', () => {
    const stream = find('Ingress', 'gateway-stream');
    expect(JSON.stringify(stream.spec)).toContain('"path":"/api/v1/ai/chat/stream"');
    expect(stream.metadata.annotations).toMatchObject({
      'nginx.ingress.kubernetes.io/proxy-buffering': 'off',
    });
    expect(
      Number(stream.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-read-timeout']),
    ).toBeGreaterThanOrEqual(3600);
    // Longer than the gateway's request deadline (AI_REQUEST_DEADLINE_MS, 60 s), after which it answers 504 itself.
    const ai = find('Ingress', 'gateway-ai');
    expect(JSON.stringify(ai.spec)).toContain('"path":"/api/v1/ai/"');
    expect(JSON.stringify(ai.spec)).toContain('"path":"/v1/"');
    expect(
      Number(ai.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-read-timeout']),
    ).toBeGreaterThan(60);
  });

  it('lets only the ingress controller reach the service pods (they trust its X-Forwarded-* headers)', () => {
    const policy = ofKind<
      K8sObject & {
        spec: { podSelector: object; ingress: Array<{ from: Array<{ namespaceSelector?: object }> }> };
      }
    >('NetworkPolicy').find((p) => p.metadata.name === 'platform-from-ingress');
    expect(JSON.stringify(policy?.spec.podSelector)).toContain('"values":["payment","gateway"]');
    expect(policy?.spec.ingress).toHaveLength(1);
    expect(policy?.spec.ingress[0]?.from).toEqual([
      expect.objectContaining({
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
      }),
    ]);
  });

  it('refuses kustomize fields the renderer does not implement, rather than skipping them', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kustomize-'));
    try {
      fs.writeFileSync(path.join(dir, 'kustomization.yaml'), 'commonLabels:\n  a: b\nresources: []\n');
      expect(() => renderKustomization(dir)).toThrow('unsupported kustomize fields: commonLabels');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(SERVICES)('infra/k8s: $name', ({ name, schema }) => {
  const deployment = find<Workload>('Deployment', name);
  const pod = deployment.spec.template;
  const container = pod.spec.containers.find((c) => c.name === name) as Container;
  const env = environment(container);

  it('provides every variable the service requires in production, from a ConfigMap or a Secret', () => {
    const required = requiredInProduction(name, schema);
    expect(required).toEqual(expect.arrayContaining(['DATABASE_URL', 'REDIS_URL']));
    expect(required.filter((key) => !env.has(key))).toEqual([]);
    expect(env.get('NODE_ENV')).toEqual({ value: 'production' });
  });

  it('sets only variables the env schema knows, with values it accepts, and secrets from its Secret', () => {
    const known = new Set(Object.keys(schema.shape));
    expect([...env.keys()].filter((key) => !known.has(key))).toEqual([]);
    for (const [key, source] of env) {
      if (source.value !== undefined) {
        const parsed = schema.shape[key]?.safeParse(source.value);
        expect({ key, ok: parsed?.success }).toEqual({ key, ok: true });
      }
      if (SECRET_NAME.test(key)) expect(source.secret).toBe(`${name}-secrets/${key}`);
    }
  });

  it("listens on the image's port, probed for readiness on /health/ready and liveness on /health", () => {
    const port = imagePort(name);
    expect(port).toBeGreaterThan(0);
    expect(container.ports).toEqual([expect.objectContaining({ name: 'http', containerPort: port })]);
    expect(env.get('PORT')).toEqual({ value: String(port) });
    expect(container.image).toBe(`registry.example.com/platform/${name}:1.0.0`);
    expect(container.readinessProbe?.httpGet).toEqual({ path: '/health/ready', port: 'http' });
    expect(container.livenessProbe?.httpGet).toEqual({ path: '/health', port: 'http' });
  });

  it('gives a stopping pod time to leave the endpoints, drain and close before it is killed', () => {
    const command = container.lifecycle?.preStop?.exec?.command ?? [];
    expect(command.slice(0, 1)).toEqual(['sleep']);
    const preStop = Number(command[1]);
    expect(preStop).toBeGreaterThan(0);
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(
      preStop + DRAIN_SECONDS + CLOSE_MARGIN_SECONDS,
    );
  });

  it('is reached through a Service that selects its server pods and not its migrate Job', () => {
    const service = find<
      K8sObject & { spec: { selector: Record<string, string>; ports: Array<{ targetPort: string }> } }
    >('Service', name);
    expect(selects(service.spec.selector, pod.metadata.labels)).toBe(true);
    expect(selects(deployment.spec.selector?.matchLabels ?? {}, pod.metadata.labels)).toBe(true);
    expect(service.spec.ports.map((p) => p.targetPort)).toEqual(['http']);
    const job = find<Workload>('Job', `${name}-migrate`);
    expect(selects(service.spec.selector, job.spec.template.metadata.labels)).toBe(false);
  });

  it('migrates with a Job of the same release before the rollout, with the same database secret', () => {
    const job = find<Workload>('Job', `${name}-migrate`);
    expect(job.metadata.annotations).toMatchObject({ 'argocd.argoproj.io/hook': 'PreSync' });
    const [migrate] = job.spec.template.spec.containers;
    // The release's own image and migration runner: no separate image, nothing downloaded.
    expect(migrate?.image).toBe(`registry.example.com/platform/${name}:1.0.0`);
    expect(migrate?.image).toBe(pod.spec.containers[0]?.image);
    expect(migrate?.command).toEqual(['node', '../../packages/db/dist/migrate-deploy.js']);
    expect(migrate?.args).toBeUndefined();
    expect(job.spec.template.spec.restartPolicy).toBe('Never');
    const jobEnv = environment(migrate as Container);
    expect(jobEnv.get('DATABASE_URL')).toEqual(env.get('DATABASE_URL'));
  });

  it('keeps every worker of every pod within its Postgres connection budget', () => {
    const hpa = find<K8sObject & { spec: { maxReplicas: number } }>('HorizontalPodAutoscaler', name);
    const replicas = Number(env.get('SERVICE_REPLICAS')?.value);
    // The most pods at once: the autoscaler's maximum plus the rollout's surge.
    expect(replicas).toBeGreaterThanOrEqual(
      hpa.spec.maxReplicas + (deployment.spec.strategy?.rollingUpdate?.maxSurge ?? 0),
    );
    // WORKERS=auto: one worker per CPU of the limit (packages/service-kit/src/cpu-limit.ts).
    expect(env.get('WORKERS')).toEqual({ value: 'auto' });
    const workers = Math.ceil(Number(container.resources?.limits?.cpu));
    const budget = Number(env.get('DATABASE_CONNECTION_BUDGET')?.value);
    const pool = databasePoolSize({ budget, replicas, workers });
    expect(pool).toBeGreaterThanOrEqual(2);
    expect(pool * replicas * workers).toBeLessThanOrEqual(budget);
  });

  if (name === 'payment') {
    it('reconciles usage daily with a CronJob of the same image, secrets and config, outside the Service', () => {
      const cron = find<K8sObject & { spec: { schedule: string; jobTemplate: { spec: Workload['spec'] } } }>(
        'CronJob',
        'payment-usage-reconcile',
      );
      const template = cron.spec.jobTemplate.spec.template;
      const [reconcile] = template.spec.containers as Container[];
      expect(reconcile?.image).toBe(container.image);
      const cronEnv = environment(reconcile as Container);
      for (const key of ['DATABASE_URL', 'STRIPE_SECRET_KEY', 'PAYMENT_USAGE_METERS'])
        expect(cronEnv.get(key)).toEqual(env.get(key));
      const required = requiredInProduction(name, schema);
      expect(required.filter((key) => !cronEnv.has(key))).toEqual([]);
      const service = find<K8sObject & { spec: { selector: Record<string, string> } }>('Service', name);
      expect(selects(service.spec.selector, template.metadata.labels)).toBe(false);
    });
  }

  it('scales between at least two pods and lets a disruption take one at a time', () => {
    const hpa = find<
      K8sObject & {
        spec: { scaleTargetRef: { kind: string; name: string }; minReplicas: number; maxReplicas: number };
      }
    >('HorizontalPodAutoscaler', name);
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    const pdb = find<
      K8sObject & { spec: { maxUnavailable: number; selector: { matchLabels: Record<string, string> } } }
    >('PodDisruptionBudget', name);
    expect(selects(pdb.spec.selector.matchLabels, pod.metadata.labels)).toBe(true);
    expect(pdb.spec.maxUnavailable).toBe(1);
  });
});

describe('infra/k8s: Postgres connections', () => {
  it('gives the services budgets that fit in the server together', () => {
    const budgets = SERVICES.map(({ name }) => {
      const deployment = find<Workload>('Deployment', name);
      const container = deployment.spec.template.spec.containers.find((c) => c.name === name) as Container;
      return Number(environment(container).get('DATABASE_CONNECTION_BUDGET')?.value);
    });
    expect(budgets.every((b) => b > 0)).toBe(true);
    expect(budgets.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(POSTGRES_CONNECTIONS_FOR_SERVICES);
  });
});

describe('infra/k8s: payment-reconcile', () => {
  const cron = find<CronWorkload>('CronJob', 'payment-reconcile');
  const pod = cron.spec.jobTemplate.spec.template.spec;
  const [container] = pod.containers;
  const server = find<Workload>('Deployment', 'payment').spec.template.spec.containers[0] as Container;

  it('runs the reconciliation command of the release image on a schedule, one run at a time', () => {
    expect(cron.spec.schedule).toMatch(/^\S+ \S+ \S+ \S+ \S+$/);
    expect(cron.spec.concurrencyPolicy).toBe('Forbid');
    expect(container?.image).toBe('registry.example.com/platform/payment:1.0.0');
    expect((container as Container & { command?: string[] }).command).toEqual([
      'node',
      '--enable-source-maps',
      'dist/reconcile/main.js',
    ]);
    expect(fs.existsSync(path.join(ROOT, 'apps', 'payment', 'src', 'reconcile', 'main.ts'))).toBe(true);
    expect(pod.restartPolicy).toBe('Never');
  });

  it("has the server's secrets and configuration, and every variable production requires", () => {
    const env = environment(container as Container);
    const serverEnv = environment(server);
    for (const key of ['DATABASE_URL', 'REDIS_URL', 'STRIPE_SECRET_KEY', 'PAYMENT_MS_API_KEY']) {
      expect({ key, value: env.get(key) }).toEqual({ key, value: serverEnv.get(key) });
    }
    expect(container?.envFrom).toEqual(server.envFrom);
    expect(
      requiredInProduction('payment', ZPaymentEnv as unknown as EnvSchema).filter((k) => !env.has(k)),
    ).toEqual([]);
  });

  it('is not selected by the payment Service or its network policy (it serves nothing)', () => {
    const service = find<K8sObject & { spec: { selector: Record<string, string> } }>('Service', 'payment');
    expect(selects(service.spec.selector, cron.spec.jobTemplate.spec.template.metadata.labels)).toBe(false);
  });
});
