import { randomBytes, randomUUID } from 'node:crypto';
import http2 from 'node:http2';
import tls from 'node:tls';
import {
  describeWith,
  freePort,
  needNginx,
  type OpenAIFake,
  type SmtpCapture,
  type StripeFake,
} from '@platform/testing';
import { gatewayFakeEnv, paymentFakeEnv, startFakes } from './support/fakes';
import { openSse, type ProxyRequest, proxyRequest } from './support/http';
import { GATEWAY_HOST, type NginxProxy, PAYMENT_HOST, startServiceProxy } from './support/nginx';
import {
  createServiceStorage,
  type ServiceProcess,
  type ServiceStorage,
  startService,
} from './support/services';
import { createTestCertificates, type TestCertificates } from './support/tls';

// Both services run through their real src/main.ts (env parsing, migrations at
// start, TRUST_PROXY_HOPS) behind Debian's nginx with infra/proxy's config, the
// same files compose uses. Every request below goes through the proxy, over
// HTTPS with a certificate from a CA made for this run and trusted by this
// client only; plain HTTP is used only to show what it still answers.

const PAYMENT_KEY = `e2e-payment-key-${randomBytes(8).toString('hex')}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let stripe: StripeFake;
let openai: OpenAIFake;
let smtp: SmtpCapture;
const storages: ServiceStorage[] = [];
const services: ServiceProcess[] = [];
let proxy: NginxProxy;
let certs: TestCertificates;
let publicUrl: string;

const https = () => ({ port: proxy.tlsPort, ca: certs.ca });
const call = (req: ProxyRequest) => proxyRequest(https(), req);
const callPlain = (req: ProxyRequest) => proxyRequest(proxy.port, req);
const HSTS = 'max-age=31536000; includeSubDomains';
const describeWithNginx = describeWith(needNginx());
/** The services answer /metrics to this token; the proxy must still never pass it through. */
const METRICS_TOKEN = 'e2e-metrics-token-0123456789';

beforeAll(async () => {
  const fakes = await startFakes();
  ({ stripe, openai, smtp } = fakes);
  // unknown.localhost too, so a client gets as far as the proxy's own 404 for it.
  certs = createTestCertificates([PAYMENT_HOST, GATEWAY_HOST, 'unknown.localhost']);
  const [port, tlsPort] = [await freePort(), await freePort()];
  publicUrl = `https://${GATEWAY_HOST}:${tlsPort}`;
  // Recorded one by one, so afterAll cleans up whatever started before a failure.
  const paymentStorage = await createServiceStorage('payment');
  storages.push(paymentStorage);
  const gatewayStorage = await createServiceStorage('gateway');
  storages.push(gatewayStorage);
  const common = { NODE_ENV: 'test', LOG_LEVEL: 'info', TRUST_PROXY_HOPS: '1', METRICS_TOKEN };
  const started = await Promise.allSettled([
    startService('payment', {
      ...common,
      ...paymentStorage.env,
      PAYMENT_MS_API_KEY: PAYMENT_KEY,
      STRIPE_SECRET_KEY: 'sk_test_e2e_proxy',
      ...paymentFakeEnv(fakes),
    }),
    startService('gateway', {
      ...common,
      ...gatewayStorage.env,
      ...gatewayFakeEnv(fakes, publicUrl),
    }),
  ]);
  for (const result of started) if (result.status === 'fulfilled') services.push(result.value);
  for (const result of started) if (result.status === 'rejected') throw result.reason;
  const [payment, gateway] = services as [ServiceProcess, ServiceProcess];
  proxy = await startServiceProxy({
    port,
    tlsPort,
    certs,
    paymentUpstream: `127.0.0.1:${payment.port}`,
    gatewayUpstream: `127.0.0.1:${gateway.port}`,
  });
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await Promise.all(services.map((s) => s.stop()));
  await Promise.all(storages.map((s) => s.drop()));
  await Promise.all([stripe?.close(), openai?.close(), smtp?.close()]);
  certs?.remove();
}, 60_000);

/** Signs a new user in by magic link and creates an API key, all through the proxy. */
async function signInWithApiKey(): Promise<string> {
  const email = `e2e-${randomUUID()}@example.com`;
  const requested = await call({
    host: GATEWAY_HOST,
    path: '/api/v1/auth/request-magic-link',
    body: { email },
  });
  expect(requested.status).toBe(202);
  const mail = await smtp.waitForMessage((m) => m.to.includes(email), 10_000);
  const link = new URL(/https?:\/\/\S+/.exec(mail.text)?.[0] ?? 'http://missing');
  // The link carries the public base URL, i.e. the proxy's host name and port.
  expect(link.origin).toBe(publicUrl);
  const verified = await call({
    host: GATEWAY_HOST,
    path: '/api/v1/auth/verify-code',
    body: { code: link.searchParams.get('code') },
  });
  expect(verified.status).toBe(200);
  // The session cookie is Secure (the default): a browser keeps it for https only.
  const setCookies = [verified.headers['set-cookie'] ?? []].flat();
  expect(setCookies).toEqual([expect.stringMatching(/^gw_session=[^;]+;.*; Secure(;|$)/)]);
  const cookie = setCookies.map((c) => c.split(';')[0]).join('; ');
  // Sent back on the next call, the cookie is what authenticates it.
  const created = await call({
    host: GATEWAY_HOST,
    path: '/api/v1/auth/api-keys',
    headers: { cookie, origin: publicUrl },
    body: { name: 'e2e' },
  });
  expect(created.status).toBe(201);
  return (created.json as { key: string }).key;
}

describeWithNginx('through the reverse proxy', () => {
  it('routes each host name to its own service', async () => {
    const [payment, gateway] = await Promise.all([
      call({ host: PAYMENT_HOST, path: '/health' }),
      call({ host: `${GATEWAY_HOST}:${proxy.tlsPort}`, path: '/health' }),
    ]);
    expect(payment.status).toBe(200);
    expect(payment.json).toMatchObject({ status: 'ok', service: 'payment' });
    expect(gateway.status).toBe(200);
    expect(gateway.json).toMatchObject({ status: 'ok', service: 'gateway' });
  });

  it('never passes /metrics through, even with the right token', async () => {
    const authorization = `Bearer ${METRICS_TOKEN}`;
    for (const host of [PAYMENT_HOST, GATEWAY_HOST]) {
      for (const path of ['/metrics', '/metrics/', '/metrics?format=text', '//metrics']) {
        const res = await call({ host, path, headers: { authorization } });
        expect({ host, path, status: res.status }).toEqual({ host, path, status: 404 });
        expect(res.json).toEqual({ error: 'not found', request_id: expect.stringMatching(UUID) });
      }
      expect((await callPlain({ host, path: '/metrics', headers: { authorization } })).status).toBe(404);
    }
  });

  it('answers an unknown host name with a JSON 404 from the proxy itself', async () => {
    const res = await call({ host: 'unknown.localhost', path: '/health' });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      error: 'not found',
      code: 'not_found',
      request_id: expect.stringMatching(UUID),
    });
  });

  it("keeps a client's X-Request-Id, and otherwise gives nginx and the service one shared id", async () => {
    const mine = randomUUID();
    const kept = await call({ host: PAYMENT_HOST, path: '/health', headers: { 'x-request-id': mine } });
    expect(kept.headers['x-request-id']).toBe(mine);

    const minted = await call({ host: GATEWAY_HOST, path: '/health' });
    const id = minted.headers['x-request-id'];
    expect(id).toMatch(UUID);
    // nginx writes the access-log line after the response has gone out: wait for it.
    const deadline = Date.now() + 5_000;
    while (!proxy.accessLog().includes(`rid=${id}`) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(proxy.accessLog()).toContain(`rid=${id}`);
  });

  it('serves an authenticated payment call, and refuses one without the key', async () => {
    const product = stripe.seedProduct({ id: `prod_e2e_${randomBytes(4).toString('hex')}`, name: 'Pro' });
    const price = stripe.seedPrice({
      id: `price_e2e_${randomBytes(4).toString('hex')}`,
      product: product.id,
      unit_amount: 900,
      recurring: { interval: 'month' },
    });
    const body = {
      user_id: `user_${randomUUID()}`,
      email: 'ada@example.com',
      product_id: product.id,
      price_id: price.id,
      success_url: 'https://app.example.com/billing/done',
      cancel_url: 'https://app.example.com/billing/cancel',
    };
    const path = '/api/v1/checkout/subscription';
    const res = await call({ host: PAYMENT_HOST, path, headers: { 'x-api-key': PAYMENT_KEY }, body });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      checkout_session_id: expect.stringMatching(/^cs_test_/),
      checkout_url: expect.any(String),
    });

    const anonymous = await call({ host: PAYMENT_HOST, path, body });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toEqual({
      error: 'missing api key',
      code: 'missing_api_key',
      request_id: expect.stringMatching(UUID),
    });
  });

  it('signs in by magic link, creates an API key and completes a chat', async () => {
    const apiKey = await signInWithApiKey();
    openai.set({ content: 'Hello through nginx.' });
    const res = await call({
      host: GATEWAY_HOST,
      path: '/api/v1/ai/chat/completions',
      headers: { 'x-api-key': apiKey },
      body: { lane: 'free', project_id: 'e2e', messages: [{ role: 'user', content: 'Say hello.' }] },
    });
    openai.reset();
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      content: 'Hello through nginx.',
      model_used: expect.any(String),
      usage: { total_tokens: expect.any(Number) },
    });
  });

  it('streams server-sent events: the first chunk arrives while the provider is still generating', async () => {
    const apiKey = await signInWithApiKey();
    const pieces = ['one ', 'two ', 'three ', 'four'];
    openai.set({ chunks: pieces, chunkDelayMs: 400 });
    const stream = await openSse(https(), {
      host: GATEWAY_HOST,
      path: '/api/v1/ai/chat/stream',
      headers: { 'x-api-key': apiKey, accept: 'text/event-stream' },
      body: { lane: 'free', project_id: 'e2e', messages: [{ role: 'user', content: 'Count.' }] },
    });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
      const first = await stream.next();
      expect(first).toEqual({ event: 'chunk', data: { content: 'one ' } });
      // Buffering anywhere on the way would hold this chunk until the upstream finished.
      const upstream = openai.requests.filter((r) => r.path === '/v1/chat/completions').at(-1);
      expect(upstream?.completed).toBe(false);

      const rest = [];
      for (let event = await stream.next(); event; event = await stream.next()) rest.push(event);
      const chunks = rest
        .filter((e) => e.event === 'chunk')
        .map((e) => (e.data as { content: string }).content);
      expect(['one ', ...chunks].join('')).toBe(pieces.join(''));
      expect(rest.at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
      expect(upstream?.completed).toBe(true);
    } finally {
      stream.close();
      openai.reset();
    }
  });

  it('streams the OpenAI-compatible /v1 unbuffered, ending with [DONE]', async () => {
    const apiKey = await signInWithApiKey();
    const pieces = ['one ', 'two ', 'three'];
    openai.set({ chunks: pieces, chunkDelayMs: 400 });
    const stream = await openSse(https(), {
      host: GATEWAY_HOST,
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${apiKey}` },
      body: { model: 'free', stream: true, messages: [{ role: 'user', content: 'Count.' }] },
    });
    type Chunk = { object: string; choices: Array<{ delta: { content?: string } }> };
    const contentOf = (data: unknown) => (data as Chunk).choices?.[0]?.delta.content ?? '';
    try {
      expect(stream.status).toBe(200);
      let text = '';
      while (text === '') {
        const event = await stream.next();
        expect(event).toMatchObject({ event: 'message', data: { object: 'chat.completion.chunk' } });
        text += contentOf(event?.data);
      }
      expect(text).toBe('one ');
      // Buffering anywhere on the way would hold this chunk until the upstream finished.
      const upstream = openai.requests.filter((r) => r.path === '/v1/chat/completions').at(-1);
      expect(upstream?.completed).toBe(false);

      const rest = [];
      for (let event = await stream.next(); event; event = await stream.next()) rest.push(event.data);
      expect(text + rest.map(contentOf).join('')).toBe(pieces.join(''));
      expect(rest.at(-1)).toBe('[DONE]');
    } finally {
      stream.close();
      openai.reset();
    }
  });

  it('rate-limits by the client address nginx saw, not by the proxy address or a forged header', async () => {
    const verify = (localAddress: string, headers: Record<string, string> = {}) =>
      call({
        host: GATEWAY_HOST,
        path: '/api/v1/auth/verify-code',
        localAddress,
        headers,
        body: { code: `not-a-real-code-${randomBytes(8).toString('hex')}` },
      });
    // The gateway allows 10 failed codes per client address per 15 minutes.
    for (let i = 0; i < 10; i += 1) expect((await verify('127.0.0.2')).status).toBe(400);
    const limited = await verify('127.0.0.2');
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({
      error: 'rate_limited',
      code: 'rate_limited',
      request_id: expect.stringMatching(UUID),
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);

    // A forged X-Forwarded-For does not buy a fresh bucket: nginx appends the real peer.
    const forged = await verify('127.0.0.2', { 'x-forwarded-for': '198.51.100.7' });
    expect(forged.status).toBe(429);

    // Another client behind the same proxy connection address still gets through.
    const other = await verify('127.0.0.3');
    expect(other.status).toBe(400);
    expect(other.json).toMatchObject({ error: 'invalid or expired code' });
  });

  it('lets chat bodies above 8 MB reach the gateway, and refuses absurd ones with a JSON 413', async () => {
    const nineMb = 'x'.repeat(9 * 1024 * 1024);
    const body = { lane: 'free', project_id: 'e2e', messages: [{ role: 'user', content: nineMb }] };
    const path = '/api/v1/ai/chat/completions';
    // No key: the gateway itself answers, which shows the body got past the proxy.
    const passed = await call({ host: GATEWAY_HOST, path, body });
    expect(passed.status).toBe(401);
    expect(passed.json).toMatchObject({ error: 'missing api key' });

    const huge = await call({ host: GATEWAY_HOST, path, body: 'x'.repeat(13 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect(huge.json).toEqual({
      error: 'payload too large',
      code: 'payload_too_large',
      request_id: expect.stringMatching(UUID),
    });
  });
});

describeWithNginx('TLS at the proxy', () => {
  it('sends the Secure session cookie back over HTTPS, where it authenticates the next call', async () => {
    const email = `e2e-${randomUUID()}@example.com`;
    await call({ host: GATEWAY_HOST, path: '/api/v1/auth/request-magic-link', body: { email } });
    const mail = await smtp.waitForMessage((m) => m.to.includes(email), 10_000);
    const code = new URL(/https?:\/\/\S+/.exec(mail.text)?.[0] ?? 'http://missing').searchParams.get('code');
    const verified = await call({ host: GATEWAY_HOST, path: '/api/v1/auth/verify-code', body: { code } });
    const setCookie = [verified.headers['set-cookie'] ?? []].flat()[0] ?? '';
    expect(setCookie.split(';').map((part) => part.trim())).toContain('Secure');
    const cookie = setCookie.split(';')[0] ?? '';

    const session = await call({ host: GATEWAY_HOST, path: '/api/v1/auth/session', headers: { cookie } });
    expect(session.status).toBe(200);
    expect(session.json).toMatchObject({ email });
    const without = await call({ host: GATEWAY_HOST, path: '/api/v1/auth/session' });
    expect(without.status).toBe(401);
  });

  it('redirects plain HTTP to the same URL on HTTPS, keeping the method', async () => {
    const res = await callPlain({ host: GATEWAY_HOST, path: '/api/v1/me?x=1' });
    expect(res.status).toBe(308);
    expect(res.headers.location).toBe(`https://${GATEWAY_HOST}:${proxy.tlsPort}/api/v1/me?x=1`);
    expect(res.headers['strict-transport-security']).toBeUndefined();

    const post = await callPlain({ host: PAYMENT_HOST, path: '/api/v1/checkout/subscription', body: {} });
    expect(post.status).toBe(308);
    expect(post.headers.location).toBe(
      `https://${PAYMENT_HOST}:${proxy.tlsPort}/api/v1/checkout/subscription`,
    );
  });

  it('answers the health paths on plain HTTP from the services themselves, for probes', async () => {
    const [payment, gateway] = await Promise.all([
      callPlain({ host: PAYMENT_HOST, path: '/health' }),
      callPlain({ host: GATEWAY_HOST, path: '/health' }),
    ]);
    expect(payment.json).toMatchObject({ status: 'ok', service: 'payment' });
    expect(gateway.json).toMatchObject({ status: 'ok', service: 'gateway' });
    expect(gateway.headers['strict-transport-security']).toBeUndefined();

    // Readiness goes to the service too (whatever it answers), never to the redirect.
    const ready = await callPlain({ host: GATEWAY_HOST, path: '/health/ready' });
    expect(ready.status).not.toBe(308);
    const id = ready.headers['x-request-id'];
    const deadline = Date.now() + 5_000;
    const logged = () =>
      proxy
        .accessLog()
        .split('\n')
        .find((line) => line.includes(`rid=${id}`));
    while (!logged() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(logged()).toMatch(/"GET \/health\/ready HTTP\/1\.1" \d+ .* upstream=127\.0\.0\.1:\d+ /);
  });

  it('sends HSTS exactly once on HTTPS answers, from the services and from nginx itself', async () => {
    const [service, unknown] = await Promise.all([
      call({ host: PAYMENT_HOST, path: '/health' }),
      call({ host: 'unknown.localhost', path: '/' }),
    ]);
    expect(service.status).toBe(200);
    // helmet's own header is replaced, not repeated (node joins repeated headers with ", ").
    expect(service.headers['strict-transport-security']).toBe(HSTS);
    expect(unknown.status).toBe(404);
    expect(unknown.headers['strict-transport-security']).toBe(HSTS);
  });

  it('speaks HTTP/2 to clients that offer it', async () => {
    const session = http2.connect(`https://127.0.0.1:${proxy.tlsPort}`, {
      ca: certs.ca,
      servername: GATEWAY_HOST,
    });
    try {
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = session.request({ ':path': '/health', ':authority': GATEWAY_HOST });
        let status = 0;
        let body = '';
        req.setEncoding('utf8');
        req.on('response', (headers) => {
          status = Number(headers[':status']);
        });
        req.on('data', (chunk: string) => {
          body += chunk;
        });
        req.on('end', () => resolve({ status, body }));
        req.on('error', reject);
        req.end();
      });
      expect(session.alpnProtocol).toBe('h2');
      expect(status).toBe(200);
      expect(JSON.parse(body)).toMatchObject({ service: 'gateway' });
    } finally {
      session.close();
    }
  });

  it('streams server-sent events over HTTP/2, as browsers receive them, chunk by chunk', async () => {
    const apiKey = await signInWithApiKey();
    openai.set({ chunks: ['one ', 'two ', 'three'], chunkDelayMs: 400 });
    const session = http2.connect(`https://127.0.0.1:${proxy.tlsPort}`, {
      ca: certs.ca,
      servername: GATEWAY_HOST,
    });
    try {
      const payload = JSON.stringify({
        lane: 'free',
        project_id: 'e2e',
        messages: [{ role: 'user', content: 'Count.' }],
      });
      const req = session.request({
        ':method': 'POST',
        ':path': '/api/v1/ai/chat/stream',
        ':authority': GATEWAY_HOST,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'x-api-key': apiKey,
      });
      req.setEncoding('utf8');
      const status = new Promise<number>((resolve) =>
        req.on('response', (h) => resolve(Number(h[':status']))),
      );
      let text = '';
      const firstChunk = new Promise<void>((resolve) =>
        req.on('data', (chunk: string) => {
          text += chunk;
          if (text.includes('event: chunk')) resolve();
        }),
      );
      const ended = new Promise<void>((resolve, reject) => {
        req.on('end', resolve);
        req.on('error', reject);
      });
      req.end(payload);
      expect(await status).toBe(200);
      await firstChunk;
      // The first chunk is here while the provider is still generating: nothing buffered it.
      const upstream = openai.requests.filter((r) => r.path === '/v1/chat/completions').at(-1);
      expect(upstream?.completed).toBe(false);
      await ended;
      expect(text).toContain('event: done');
    } finally {
      session.close();
      openai.reset();
    }
  });

  it('negotiates TLS 1.3, and TLS 1.2 only with a forward-secret AEAD cipher', async () => {
    const handshake = (options: tls.ConnectionOptions) =>
      new Promise<{ protocol: string | null; cipher: string }>((resolve, reject) => {
        const socket = tls.connect({
          host: '127.0.0.1',
          port: proxy.tlsPort,
          servername: GATEWAY_HOST,
          ca: certs.ca,
          ...options,
        });
        socket.once('secureConnect', () => {
          resolve({ protocol: socket.getProtocol(), cipher: socket.getCipher().name });
          socket.destroy();
        });
        socket.once('error', reject);
      });
    expect((await handshake({})).protocol).toBe('TLSv1.3');
    const v12 = await handshake({ maxVersion: 'TLSv1.2' });
    expect(v12.protocol).toBe('TLSv1.2');
    expect(v12.cipher).toMatch(/^ECDHE-(ECDSA|RSA)-(AES\d+-GCM-SHA\d+|CHACHA20-POLY1305)$/);
    // A client offering only CBC ciphers gets no TLS 1.2 connection.
    await expect(
      handshake({ maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES128-SHA' }),
    ).rejects.toThrow();
  });
});
