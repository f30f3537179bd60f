import path from 'node:path';
import type { CreateApiKeyResponse } from '@platform/contract';
import type { KeyValueStore } from '@platform/db';
import { createLogger, createMemoryDestination } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import {
  type CapturedMessage,
  createTestDatabase,
  createTestKv,
  perTestFile,
  type SmtpCapture,
  startSmtpCapture,
} from '@platform/testing';
import type { Express } from 'express';
import request from 'supertest';
import type { GatewayDeps } from '../../src/deps';
import { PrismaClient } from '../../src/generated/prisma/client';
import { GATEWAY_MIGRATIONS_DIR, type GatewayInstance, startGatewayInstance } from './gateway-app';

export const PUBLIC_URL = 'http://gateway.test';
const CONSOLE_FIXTURE_DIR = path.join(__dirname, 'console-fixture');
export const APP_ORIGIN = 'http://app.test';
export const OWN_ORIGIN = PUBLIC_URL;
export const EVIL_ORIGIN = 'http://evil.test';
export const SECRET = 'identity-test-secret-0123456789abcdef';

/** A movable clock shared by every instance of the harness. */
export type TestClock = { now: Clock; advance(ms: number): void };

function createClock(): TestClock {
  let current = Date.now();
  return {
    now: () => current,
    advance(ms) {
      current += ms;
    },
  };
}

type Logs = ReturnType<typeof createMemoryDestination>;

/** One gateway process: its own deps (so its own key cache), the shared DB and store. */
export type Instance = GatewayInstance;

export type SignedIn = { cookie: string; token: string; userId: string; email: string };

export type IdentityHarness = {
  app: Express;
  deps: GatewayDeps;
  prisma: PrismaClient;
  kv: KeyValueStore;
  clock: TestClock;
  logs: Logs;
  smtp: SmtpCapture;
  /** Another app instance on the same database and key-value store (another replica). */
  startInstance(env?: Record<string, string>): Promise<Instance>;
  /** The link of the next mail sent to `email`. */
  nextLink(email: string): Promise<URL>;
  /** Requests a link, reads it from the captured mail and verifies its code. */
  signIn(email?: string): Promise<SignedIn>;
  createKey(cookie: string, name?: string): Promise<CreateApiKeyResponse>;
  close(): Promise<void>;
};

let counter = 0;
/** A unique address per call, so tests in one file never share users or limits. */
export function uniqueEmail(tag = 'user'): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now()}-${counter}@example.com`;
}

/** `name=value` of the session cookie from a response's Set-Cookie, if set. */
export function sessionCookieOf(res: request.Response, name = 'gw_session'): string | undefined {
  const raw = res.headers['set-cookie'] as unknown as string[] | undefined;
  const line = raw?.find((c) => c.startsWith(`${name}=`));
  return line?.split(';')[0];
}

export async function startIdentityHarness(
  envOverrides: Record<string, string> = {},
): Promise<IdentityHarness> {
  const database = await createTestDatabase({ migrationsDir: GATEWAY_MIGRATIONS_DIR });
  const prisma = new PrismaClient({ adapter: database.adapter });
  const kv = createTestKv();
  const smtp = await startSmtpCapture();
  const logs = createMemoryDestination();
  const logger = createLogger({ service: 'gateway', destination: logs, level: 'debug' });
  const clock = createClock();
  const instances: Instance[] = [];
  // Mails already handed out, so each nextLink() gets the newest unread one.
  const seen = new Set<CapturedMessage>();

  const startInstance = async (env: Record<string, string> = {}): Promise<Instance> => {
    const vars = {
      NODE_ENV: 'test',
      GATEWAY_PUBLIC_URL: PUBLIC_URL,
      GATEWAY_CORS_ORIGINS: APP_ORIGIN,
      GATEWAY_SECRET: SECRET,
      // The SMTP mailer the wiring picks when SMTP_URL is set, on the capture server.
      SMTP_URL: `${smtp.url}?ignoreTLS=true`,
      // Tests give each simulated client its own X-Forwarded-For address.
      TRUST_PROXY_HOPS: '1',
      // A stand-in for the console build, so opening a mailed link works without `npm run build`.
      GATEWAY_CONSOLE_DIR: CONSOLE_FIXTURE_DIR,
      ...envOverrides,
      ...env,
    };
    const instance = startGatewayInstance({ logger, prisma, sql: database.db, kv }, vars, {
      clock: clock.now,
    });
    instances.push(instance);
    return instance;
  };

  const main = await startInstance();

  const nextLink = async (email: string): Promise<URL> => {
    const message = await smtp.waitForMessage((m) => m.to.includes(email) && !seen.has(m));
    seen.add(message);
    const match = /https?:\/\/\S+/.exec(message.text);
    if (!match) throw new Error('no link in the captured mail');
    return new URL(match[0]);
  };

  const signIn = async (email = uniqueEmail()): Promise<SignedIn> => {
    counter += 1;
    const ip = `10.200.${Math.floor(counter / 250) % 250}.${(counter % 250) + 1}`;
    const requested = await request(main.app)
      .post('/api/v1/auth/request-magic-link')
      .set('X-Forwarded-For', ip)
      .send({ email });
    if (requested.status !== 202) throw new Error(`request-magic-link answered ${requested.status}`);
    const link = await nextLink(email);
    const verified = await request(main.app)
      .post('/api/v1/auth/verify-code')
      .set('X-Forwarded-For', ip)
      .send({ code: link.searchParams.get('code') });
    const cookie = sessionCookieOf(verified);
    if (verified.status !== 200 || !cookie) throw new Error(`verify-code answered ${verified.status}`);
    return { cookie, token: cookie.split('=')[1] ?? '', userId: verified.body.user.id, email };
  };

  const createKey = async (cookie: string, name = 'key'): Promise<CreateApiKeyResponse> => {
    const res = await request(main.app)
      .post('/api/v1/auth/api-keys')
      .set('Cookie', cookie)
      .set('Origin', OWN_ORIGIN)
      .send({ name });
    if (res.status !== 201) throw new Error(`create key answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as CreateApiKeyResponse;
  };

  return {
    app: main.app,
    deps: main.deps,
    prisma,
    kv,
    clock,
    logs,
    smtp,
    startInstance,
    nextLink,
    signIn,
    createKey,
    async close() {
      for (const instance of instances) await instance.close();
      await prisma.$disconnect();
      await database.drop();
      await kv.close();
      await smtp.close();
    },
  };
}

/** The identity harness of a test file: started before its first test, closed after its last. */
export function useIdentityHarness(env: Record<string, string> = {}): IdentityHarness {
  return perTestFile(() => startIdentityHarness(env));
}
