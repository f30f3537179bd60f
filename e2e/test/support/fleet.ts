import { randomInt } from 'node:crypto';
import { connect } from 'node:net';
import { freePort, type OpenAIFake, type SmtpCapture, type StripeFake } from '@platform/testing';
import { gatewayFakeEnv, paymentFakeEnv, startFakes } from './fakes';
import { type ProxyRequest, type ProxyResponse, proxyRequest } from './http';
import { GATEWAY_HOST, type NginxProxy, PAYMENT_HOST, startServiceProxy } from './nginx';
import { createServiceStorage, type ServiceProcess, startService } from './services';
import { createTestCertificates } from './tls';

export { GATEWAY_HOST, PAYMENT_HOST };

export type Pair = [ServiceProcess, ServiceProcess];

/** Two instances of each service behind the shipped nginx config, with the fakes they talk to. */
export type Fleet = {
  stripe: StripeFake;
  openai: OpenAIFake;
  smtp: SmtpCapture;
  proxy: NginxProxy;
  payment: Pair;
  gateway: Pair;
  /** The gateway's public base URL (the proxy's HTTPS address). */
  publicUrl: string;
  /** Through the proxy, over HTTPS, as a client on the internet sends it. */
  viaProxy(req: Omit<ProxyRequest, 'localAddress'>): Promise<ProxyResponse>;
  /** Straight to one instance, as the proxy would hand it over. */
  direct(instance: ServiceProcess, req: Omit<ProxyRequest, 'localAddress'>): Promise<ProxyResponse>;
  /** The `upstream=` field of the access-log line of each request id ('' while not logged). */
  upstreamsOf(requestIds: string[]): string[];
  /** Waits until nginx has logged every one of the request ids (it logs after answering). */
  waitForLogged(requestIds: string[]): Promise<void>;
  close(): Promise<void>;
};

export type FleetOptions = {
  /** The Postgres server the services' databases are created on (new ones, one per service). */
  databaseUrl: string;
  /** The Redis both services share. */
  redisUrl: string;
  paymentEnv: Record<string, string>;
  gatewayEnv: Record<string, string>;
};

export const addressOf = (instance: ServiceProcess) => `127.0.0.1:${instance.port}`;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once nothing accepts connections on the port any more. */
export async function waitUntilRefusing(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    if (refused) return;
    await pause(10);
  }
  throw new Error(`port ${port} still accepts connections after 10 s`);
}

/**
 * Starts the fakes, a fresh database per service, two instances of each service
 * in production mode (together, on the empty database: both apply migrations
 * at start under one advisory lock) and nginx with one upstream server per
 * instance. Whatever started is stopped again when a later step fails.
 */
export async function startFleet(opts: FleetOptions): Promise<Fleet> {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
  try {
    const fakes = await startFakes();
    const { stripe, openai, smtp } = fakes;
    cleanups.push(() => Promise.all([stripe.close(), openai.close(), smtp.close()]));
    const certs = createTestCertificates([PAYMENT_HOST, GATEWAY_HOST]);
    cleanups.push(() => certs.remove());
    const paymentStorage = await createServiceStorage('payment', opts.databaseUrl);
    cleanups.push(() => paymentStorage.drop());
    const gatewayStorage = await createServiceStorage('gateway', opts.databaseUrl);
    cleanups.push(() => gatewayStorage.drop());

    const [port, tlsPort] = [await freePort(), await freePort()];
    const publicUrl = `https://${GATEWAY_HOST}:${tlsPort}`;
    const common = {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      TRUST_PROXY_HOPS: '1',
      REDIS_URL: opts.redisUrl,
    };
    const startPair = async (name: 'payment' | 'gateway', env: Record<string, string>): Promise<Pair> => {
      const started = await Promise.allSettled([startService(name, env), startService(name, env)]);
      for (const result of started) {
        if (result.status === 'fulfilled') cleanups.push(() => result.value.stop());
      }
      for (const result of started) if (result.status === 'rejected') throw result.reason;
      return started.map((r) => (r as PromiseFulfilledResult<ServiceProcess>).value) as Pair;
    };
    const [payment, gateway] = await Promise.all([
      startPair('payment', {
        ...common,
        ...paymentStorage.env,
        ...paymentFakeEnv(fakes),
        ...opts.paymentEnv,
      }),
      startPair('gateway', {
        ...common,
        ...gatewayStorage.env,
        ...gatewayFakeEnv(fakes, publicUrl),
        ...opts.gatewayEnv,
      }),
    ]);
    const proxy = await startServiceProxy({
      port,
      tlsPort,
      certs,
      paymentUpstream: payment.map(addressOf),
      gatewayUpstream: gateway.map(addressOf),
    });
    cleanups.push(() => proxy.close());

    // The services keep their fixed key prefixes in the shared Redis; every
    // identity a test makes (users, keys, and this client address, which the
    // sign-in limits count) is new in each run, so no counter of another run
    // or test file is ever read.
    const clientAddress = `127.${randomInt(1, 255)}.${randomInt(0, 255)}.${randomInt(1, 255)}`;
    const upstreamsOf = (requestIds: string[]) => {
      const lines = proxy.accessLog().split('\n');
      return requestIds.map((id) => {
        const line = lines.find((l) => l.includes(`rid=${id} `)) ?? '';
        return /upstream=(.*?) upstream_status=/.exec(line)?.[1] ?? '';
      });
    };
    return {
      stripe,
      openai,
      smtp,
      proxy,
      payment,
      gateway,
      publicUrl,
      viaProxy: (req) =>
        proxyRequest({ port: proxy.tlsPort, ca: certs.ca }, { ...req, localAddress: clientAddress }),
      direct: (instance, req) => proxyRequest(instance.port, { ...req, localAddress: clientAddress }),
      upstreamsOf,
      async waitForLogged(requestIds) {
        const deadline = Date.now() + 5_000;
        while (upstreamsOf(requestIds).includes('') && Date.now() < deadline) await pause(25);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
