// CPU of the tracing hooks of one chat request, in isolation: the built service-kit
// helpers and gateway spans (request span middleware, reservation, attempt with its
// traceparent, response attributes, ledger record), the real SDK exporting to the
// OTLP sink (node bench/src/profile/otlp-sink.cjs). Needs a build (npx turbo run build
// --filter=@platform/gateway). Usage: node bench/src/profile/tracing-hooks.cjs on|off [requests per round]
// EXTRA="OTEL_NAME=value ..." adds standard variables (e.g. OTEL_EXPORTER_OTLP_PROTOCOL=http/json);
// SINK=http://127.0.0.1:<port> another sink than 4319.
const { EventEmitter } = require('node:events');
const path = `${require('node:path').resolve(__dirname, '../../..')}/`;
const env = {
  OTEL_EXPORTER_OTLP_ENDPOINT: process.env.SINK || 'http://127.0.0.1:4319',
  OTEL_TRACES_SAMPLER: 'always_on',
};
for (const kv of (process.env.EXTRA || '').split(' ').filter(Boolean)) {
  const [k, v] = kv.split('=');
  env[k] = v;
}
const on = process.argv[2] !== 'off';
if (on) Object.assign(process.env, env);
const sk = require(`${path}packages/service-kit/dist/index.js`);
const spans = require(`${path}apps/gateway/dist/observability/spans.js`);
const tracing = on ? sk.startTracing({ service: 'gateway', env }) : undefined;
const mw = require(`${path}packages/service-kit/dist/tracing.js`).traceRequests();
const record = {
  requestId: 'req_0123456789abcdef',
  userId: 'user_1234',
  apiKeyId: 'key_abcdef',
  projectId: 'bench',
  endpoint: 'chat',
  lane: 'free',
  provider: 'groq',
  model: 'free-a',
  status: 200,
  promptTokens: 12,
  completionTokens: 7,
  cachedTokens: 0,
  totalTokens: 19,
  costMicros: 26,
  currency: 'USD',
  estimated: false,
  byok: false,
};
async function one() {
  const req = {
    method: 'POST',
    path: '/api/v1/ai/chat/completions',
    baseUrl: '/api/v1/ai',
    headers: { 'user-agent': 'autocannon', 'content-type': 'application/json' },
    get(h) {
      return this.headers[h];
    },
  };
  const res = new EventEmitter();
  res.locals = { requestId: 'r-1' };
  res.statusCode = 200;
  res.writableFinished = true;
  await new Promise((resolve) =>
    mw(req, res, async () => {
      await sk.traced('gateway.budget.reserve', async () => 1);
      const span = spans.startAttemptSpan({
        endpoint: 'chat',
        target: { provider: 'groq', model: 'free-a' },
        credential: { byok: false },
        position: 1,
        retry: 0,
        attempt: 1,
        breakerState: 'closed',
      });
      await sk.inSpan(span, async () => {
        sk.withTraceHeaders({ authorization: 'x', 'content-type': 'application/json' });
        if (sk.tracingOn())
          spans.annotateChatResponse({
            model: 'free-a',
            choices: [{ finish_reason: 'stop' }],
            usage: { prompt_tokens: 12, completion_tokens: 7 },
          });
      });
      spans.endAttemptSpan(span, { outcome: 'success', status: 200 }, 3);
      spans.annotateRecord(record);
      const l = sk.startSpan('gateway.ledger.append', undefined);
      await null;
      sk.endSpan(l);
      req.route = { path: '/chat/completions' };
      res.emit('finish');
      res.emit('close');
      resolve();
    }),
  );
}
(async () => {
  const N = Number(process.argv[3] || 20000);
  for (let i = 0; i < 3000; i++) await one();
  const rounds = [];
  for (let r = 0; r < 5; r++) {
    const c0 = process.cpuUsage();
    const _t0 = performance.now();
    for (let i = 0; i < N; i++) {
      await one();
      if (i % 64 === 0) await new Promise(setImmediate);
    }
    await new Promise((r) => setTimeout(r, 50));
    const c = process.cpuUsage(c0);
    rounds.push((c.user + c.system) / N);
  }
  rounds.sort((a, b) => a - b);
  console.log(
    `${on ? 'on ' : 'off'} ${process.env.EXTRA || ''} µs CPU per request: median ${rounds[2].toFixed(1)} (min ${rounds[0].toFixed(1)}, max ${rounds[4].toFixed(1)})`,
  );
  await tracing?.shutdown();
  process.exit(0);
})();
