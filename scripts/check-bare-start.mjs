#!/usr/bin/env node
// The README's run command on a bare machine (.ci/bare-run runs this in the fresh
// clone, inside a network namespace with no Postgres or Redis): `npm start` brings
// both services up on embedded defaults, the console answers, a newcomer signs in
// with the link the log mailer prints (no SMTP_URL), creates an API key, and a chat
// on the free lane answers 503 `upstream AI service unavailable` (no provider keys).
// Then Ctrl-C stops both. Exit 0 when all of that held; else 1, with the output tail.
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const PAYMENT = 'http://localhost:3001';
const GATEWAY = 'http://localhost:3002';
const START_LIMIT_MS = 300_000;
const STOP_LIMIT_MS = 30_000;

const started = Date.now();
const seconds = (from = started) => `${Math.round((Date.now() - from) / 1000)}s`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Its own process group, so Ctrl-C (SIGINT to the group) reaches turbo and both services.
const child = spawn('npm', ['start'], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
child.stdout.on('data', (chunk) => {
  output += chunk;
});
child.stderr.on('data', (chunk) => {
  output += chunk;
});
const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

class CheckFailed extends Error {}
function check(ok, what) {
  if (!ok) throw new CheckFailed(what);
  console.log(`  ok: ${what}`);
}

async function get(url, init) {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    return { status: res.status, headers: res.headers, text: await res.text() };
  } catch {
    return { status: 0, headers: new Headers(), text: '' };
  }
}

async function post(url, body, headers = {}) {
  const res = await get(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  let json;
  try {
    json = JSON.parse(res.text);
  } catch {}
  return { ...res, json };
}

async function until(what, probe, limitMs) {
  const end = Date.now() + limitMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new CheckFailed(`${what} within ${limitMs / 1000}s`);
    await sleep(500);
  }
}

async function signInAndCreateKey() {
  const email = 'newcomer@example.com';
  const requested = await post(`${GATEWAY}/api/v1/auth/request-magic-link`, { email });
  check(requested.status === 202, `request-magic-link answers 202 (got ${requested.status})`);
  const code = await until(
    'the sign-in link printed by the log mailer',
    async () => /[?&]code=([A-Za-z0-9_-]+)/.exec(output)?.[1],
    30_000,
  );
  const verified = await post(`${GATEWAY}/api/v1/auth/verify-code`, { code });
  check(
    verified.status === 200,
    `verify-code with the printed link's code answers 200 (got ${verified.status})`,
  );
  const cookie = (verified.headers.get('set-cookie') ?? '').split(';')[0];
  const created = await post(
    `${GATEWAY}/api/v1/auth/api-keys`,
    { name: 'newcomer' },
    { cookie, origin: GATEWAY },
  );
  check(
    created.status === 201 && typeof created.json?.key === 'string',
    `an API key is created (got ${created.status})`,
  );
  return created.json.key;
}

async function run() {
  const healthy = async (base) => (await get(`${base}/health`)).status === 200;
  await until(
    'both services answering /health',
    async () => (await healthy(PAYMENT)) && (await healthy(GATEWAY)),
    START_LIMIT_MS,
  );
  check(true, `payment ${PAYMENT}/health and gateway ${GATEWAY}/health answer 200 after ${seconds()}`);
  const embedded = output.split('DATABASE_URL unset: embedded PGlite database').length - 1;
  check(embedded >= 2, `both services say they run on the embedded database (${embedded} said so)`);
  const console_ = await get(`${GATEWAY}/`);
  check(
    console_.status === 200 &&
      /text\/html/.test(console_.headers.get('content-type') ?? '') &&
      /<script/.test(console_.text),
    `the console at ${GATEWAY}/ answers 200 with its page (got ${console_.status})`,
  );
  const key = await signInAndCreateKey();
  const chat = await post(
    `${GATEWAY}/api/v1/ai/chat/completions`,
    { lane: 'free', project_id: 'newcomer', messages: [{ role: 'user', content: 'hello' }] },
    { 'x-api-key': key },
  );
  check(
    chat.status === 503 && chat.json?.error === 'upstream AI service unavailable',
    `a chat on the free lane answers 503 upstream AI service unavailable (got ${chat.status} ${chat.text.slice(0, 200)})`,
  );
}

async function stop() {
  const from = Date.now();
  try {
    process.kill(-child.pid, 'SIGINT');
  } catch {}
  const result = await Promise.race([exited, sleep(STOP_LIMIT_MS).then(() => undefined)]);
  if (!result) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
    await exited;
    throw new CheckFailed(`npm start stops within ${STOP_LIMIT_MS / 1000}s of Ctrl-C`);
  }
  const down = async (base) => (await get(`${base}/health`)).status === 0;
  check((await down(PAYMENT)) && (await down(GATEWAY)), `Ctrl-C stopped both services in ${seconds(from)}`);
  // Each service logs `stopped` once it has drained and closed its stores (service-kit runServer).
  const stopped = output.split('"msg":"stopped"').length - 1;
  check(
    stopped >= 2,
    `both services shut down gracefully (${stopped} logged "stopped"; npm start exit ${result.code ?? result.signal})`,
  );
}

let failure;
try {
  await run();
} catch (err) {
  failure = err;
}
try {
  await stop();
} catch (err) {
  failure ??= err;
}
if (failure) {
  console.log(`\n--- npm start output (last 80 lines) ---\n${output.split('\n').slice(-80).join('\n')}`);
  console.log(`bare start FAILED: ${failure instanceof CheckFailed ? failure.message : failure.stack}`);
  process.exit(1);
}
console.log(
  `bare start: both services up on embedded defaults, console 200, free-lane chat 503 upstream AI service unavailable, stopped cleanly (${seconds()})`,
);
