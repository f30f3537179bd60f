import express from 'express';
import request from 'supertest';
import {
  addAccessLogFields,
  createLogger,
  createMemoryDestination,
  httpLogger,
  isSecretName,
  redactLine,
  requestId,
} from '../src';

const SECRETS = {
  apiKey: 'gw_live_4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c',
  bearer: 'sk-proj-abcdefghijklmnop1234567890',
  cookie: 'gw_session=s3ss10nT0k3nV4lu3xyz',
  stripe: 'sk_test_51Hx9secretStripeKey000',
  code: 'mag1cC0d3-ZXY987',
  password: 'correct horse battery staple',
  webhook: 'whsec_w3bh00ks3cr3t',
  provider: 'gsk_groqProviderKey123456',
};

describe('log redaction', () => {
  it('leaves no secret of a request in any log line', async () => {
    const logs = createMemoryDestination();
    const logger = createLogger({ service: 'test', destination: logs });
    const app = express();
    app.use(requestId());
    app.use(httpLogger(logger));
    app.use(express.json());
    app.post('/login', (req, res) => {
      // Handlers log objects carrying secrets at several depths.
      logger.info({ body: req.body }, 'received');
      logger.info({ deep: { nested: { list: [{ token: SECRETS.code }] } } }, 'nested');
      res.setHeader('Set-Cookie', `${SECRETS.cookie}; HttpOnly`);
      res.json({ ok: true });
    });
    await request(app)
      .post(`/login?code=${SECRETS.code}`)
      .set('x-api-key', SECRETS.apiKey)
      .set('Authorization', `Bearer ${SECRETS.bearer}`)
      .set('Cookie', SECRETS.cookie)
      .set('Stripe-Signature', `t=1,v1=${SECRETS.webhook}`)
      .send({
        code: SECRETS.code,
        password: SECRETS.password,
        stripe_secret_key: SECRETS.stripe,
        provider: { apiKey: SECRETS.provider },
        keys: [{ key: SECRETS.provider }],
      })
      .expect(200);
    const text = logs.text();
    expect(text).toContain('request completed');
    expect(text).toContain('[REDACTED]');
    for (const [kind, value] of Object.entries(SECRETS)) {
      expect({ kind, leaked: text.includes(value) }).toEqual({ kind, leaked: false });
    }
  });

  it('writes one access-log line per request, with its request id and status and no headers', async () => {
    const logs = createMemoryDestination();
    const logger = createLogger({ service: 'test', destination: logs });
    const app = express();
    app.use(requestId());
    app.use(httpLogger(logger));
    app.get('/ok', (_req, res) => {
      addAccessLogFields(res, { provider: 'groq' });
      res.json({ ok: true });
    });
    app.get('/missing', (_req, res) => {
      res.status(404).json({ error: 'not found' });
    });
    app.get('/health', (_req, res) => {
      res.json({ ok: true });
    });
    const id = '8f14e45f-ceea-467f-a3a4-2b1e0d9f6c12';
    await request(app).get('/ok?x=1').set('x-request-id', id).set('user-agent', 'agent-007').expect(200);
    await request(app).get('/missing').expect(404);
    await request(app).get('/health').expect(200);
    const lines = logs.lines.map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.level, l.msg, l.req.url, l.res.statusCode])).toEqual([
      ['info', 'request completed', '/ok?x=1', 200],
      ['warn', 'request completed', '/missing', 404],
    ]);
    expect(lines[0]).toMatchObject({ request_id: id, provider: 'groq', req: { method: 'GET' } });
    expect(typeof lines[0].responseTime).toBe('number');
    expect(logs.text()).not.toContain('agent-007');
    expect(logs.text()).not.toContain('headers');
  });

  it('puts the request id on every line logged while serving the request', async () => {
    const logs = createMemoryDestination();
    const logger = createLogger({ service: 'test', destination: logs });
    const app = express();
    app.use(requestId());
    app.get('/', (_req, res) => {
      logger.info('inside');
      setImmediate(() => {
        logger.info('later, same async context');
        res.end();
      });
    });
    const id = '8f14e45f-ceea-467f-a3a4-2b1e0d9f6c11';
    await request(app).get('/').set('x-request-id', id).expect(200);
    const lines = logs.lines.map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.request_id).toBe(id);
  });

  it('matches secret-like names but not status codes or token counts', () => {
    for (const name of [
      'x-api-key',
      'authorization',
      'cookie',
      'set-cookie',
      'code',
      'magicCode',
      'client_secret',
      'token',
      'password',
    ])
      expect({ name, secret: isSecretName(name) }).toEqual({ name, secret: true });
    for (const name of ['statusCode', 'prompt_tokens', 'key_prefix', 'key_id', 'provider', 'keys'])
      expect({ name, secret: isSecretName(name) }).toEqual({ name, secret: false });
  });

  it('redacts arrays, numbers and escaped strings', () => {
    const line = JSON.stringify({ 'set-cookie': ['a=1', 'b="2"'], code: 123456, secret: 'x\\"y', keep: 'v' });
    const out = JSON.parse(redactLine(line));
    expect(out).toEqual({ 'set-cookie': '[REDACTED]', code: '[REDACTED]', secret: '[REDACTED]', keep: 'v' });
  });

  it('keeps an error code under `code` readable while secret codes stay redacted', () => {
    const magic = 'mAg1c_C0de-9f8e7d6c5b4a39281706f5e4d3c2b1a0zYx'; // the shape of a magic-link code
    const line = JSON.stringify({
      err: { code: 'model_not_found', cause: { code: 'ECONNREFUSED' } },
      stream: { code: 'ERR_STREAM_PREMATURE_CLOSE' },
      login: { code: magic },
      otp: { code: '123456' },
      hex: { code: 'a3f9c2d1e0b7' },
      upper: { code: 'ABCDEF' },
      long: { code: `${'a_'.repeat(40)}a` },
      number: { code: 424242 },
      magicCode: 'invalid_code',
    });
    const out = JSON.parse(redactLine(line));
    expect(out).toEqual({
      err: { code: 'model_not_found', cause: { code: 'ECONNREFUSED' } },
      stream: { code: 'ERR_STREAM_PREMATURE_CLOSE' },
      login: { code: '[REDACTED]' },
      otp: { code: '[REDACTED]' },
      hex: { code: '[REDACTED]' },
      upper: { code: '[REDACTED]' },
      long: { code: '[REDACTED]' },
      number: { code: '[REDACTED]' },
      // Only a property named exactly `code` is read this way.
      magicCode: '[REDACTED]',
    });
    expect(redactLine(line)).not.toContain(magic);
  });

  it('gives the same verdicts once its memory of names is full, and for names too long to remember', () => {
    // More distinct names than it remembers, as client-controlled keys in a logged object would be.
    const many = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`field${i}`, i]));
    expect(JSON.parse(redactLine(JSON.stringify(many)))).toEqual(many);
    const long = `${'x'.repeat(100)}_token`;
    for (let round = 0; round < 2; round += 1) {
      const out = JSON.parse(redactLine(JSON.stringify({ [long]: 's', fresh_secret: 't', statusCode: 200 })));
      expect(out).toEqual({ [long]: '[REDACTED]', fresh_secret: '[REDACTED]', statusCode: 200 });
    }
  });
});
