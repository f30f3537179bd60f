import type { Test } from 'supertest';
import { REQUEST_ID } from './error-contract';

/** One endpoint in its ordinary, authorised form; `send` builds a fresh request. */
export type EndpointProbe = { name: string; send(): Test };

/** What one request got; `status` is null when nothing came back within the bound. */
export type ProbeAnswer = { name: string; status: number | null; body: unknown; json: boolean; ms: number };

/** Sends every probe `rounds` times, all at once, each bounded by `limitMs`. */
export function probeConcurrently(
  probes: EndpointProbe[],
  rounds: number,
  limitMs = 2000,
): Promise<ProbeAnswer[]> {
  const calls: Promise<ProbeAnswer>[] = [];
  for (let i = 0; i < rounds; i++)
    for (const probe of probes) {
      const started = Date.now();
      calls.push(
        probe
          .send()
          .timeout(limitMs)
          .then(
            (res) => ({
              name: probe.name,
              status: res.status,
              body: res.body,
              json: /json/.test(res.type),
              ms: Date.now() - started,
            }),
            () => ({ name: probe.name, status: null, body: null, json: false, ms: Date.now() - started }),
          ),
      );
    }
  return Promise.all(calls);
}

/** True for the JSON error contract of both services: `{error: string, request_id: uuid}`. */
export function isErrorContract(body: unknown): boolean {
  const b = body as { error?: unknown; request_id?: unknown } | null;
  return typeof b?.error === 'string' && typeof b.request_id === 'string' && REQUEST_ID.test(b.request_id);
}

/**
 * Answers whose status is not in `expected[name]`, or errors without the JSON
 * error contract (except for `htmlPages`, which answer errors as pages).
 */
export function unexpectedAnswers(
  answers: ProbeAnswer[],
  expected: Record<string, number[]>,
  htmlPages: string[] = [],
): string[] {
  const problems: string[] = [];
  for (const a of answers) {
    const allowed = expected[a.name];
    if (!allowed) problems.push(`${a.name}: no expectation`);
    else if (a.status === null || !allowed.includes(a.status))
      problems.push(`${a.name}: ${a.status ?? 'no answer'} (expected ${allowed.join('/')})`);
    else if (a.status >= 400 && !htmlPages.includes(a.name) && !isErrorContract(a.body))
      problems.push(`${a.name}: ${a.status} without the error contract`);
  }
  return [...new Set(problems)];
}

/** Polls `check` every `intervalMs` until it is true or `timeoutMs` passed; a rejection counts as false. */
export async function eventually(
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
  intervalMs = 200,
): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return false;
}

/**
 * With FAULT_REPORT=1, prints what a fault test measured (for docs/reliability.md);
 * figures are reported, never asserted.
 */
export function reportFaultFigures(label: string, answers: ProbeAnswer[], recoveryMs?: number): void {
  if (!process.env.FAULT_REPORT) return;
  const ms = answers.map((a) => a.ms).sort((x, y) => x - y);
  const p = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))];
  const statuses: Record<string, number> = {};
  for (const a of answers) statuses[String(a.status)] = (statuses[String(a.status)] ?? 0) + 1;
  process.stdout.write(
    `${JSON.stringify({
      label,
      requests: ms.length,
      p50_ms: p(0.5),
      p99_ms: p(0.99),
      max_ms: ms.at(-1),
      slowest: [...answers]
        .sort((x, y) => y.ms - x.ms)
        .slice(0, 3)
        .map((a) => `${a.name} ${a.status} ${a.ms}ms`),
      statuses,
      recovery_ms: recoveryMs,
    })}\n`,
  );
}
