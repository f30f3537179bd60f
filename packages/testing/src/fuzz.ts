import fc from 'fast-check';
import type { Response, Test } from 'supertest';
import { isErrorContract } from './fault-load';

/**
 * Property-based fuzzing of HTTP endpoints with fast-check. Seeded, so a
 * failure reproduces; `FUZZ_RUNS` (default `ciRuns`) and `FUZZ_SEED` (default
 * 20261124) set the budget and the seed for long runs by hand.
 */
export function fuzzSettings(ciRuns = 40): { numRuns: number; seed: number } {
  const runs = Number(process.env.FUZZ_RUNS);
  const seed = Number(process.env.FUZZ_SEED);
  return {
    numRuns: Number.isInteger(runs) && runs > 0 ? runs : ciRuns,
    seed: Number.isInteger(seed) ? seed : 20261124,
  };
}

/** Strings a client can put in JSON: any code unit, lone surrogates, controls and long runs included. */
export const arbText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\ud800',
    '\udfff',
    'a\ud800b',
    '%',
    '%ZZ',
    '../..',
    'null',
    '__proto__',
  ),
  fc.integer({ min: 1, max: 2000 }).map((n) => 'x'.repeat(n)),
  fc.integer({ min: 1, max: 400 }).map((n) => `${'9'.repeat(n)}`),
);

/** Any JSON value, with hostile strings and keys. */
export const arbJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    arbText,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.oneof(arbText, fc.constantFrom('__proto__', 'constructor')), tie('value'), {
      maxKeys: 5,
    }),
  ),
})).value;

/**
 * Bodies around a valid one: the valid body, one field replaced, removed or
 * added, a nested value deep inside, or any JSON value at all.
 */
export function arbBodyAround(valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(valid);
  const mutated = keys.length
    ? fc.oneof(
        fc.tuple(fc.constantFrom(...keys), arbJson).map(([k, v]) => ({ ...valid, [k]: v })),
        fc.constantFrom(...keys).map((k) => {
          const { [k]: _dropped, ...rest } = valid;
          return rest;
        }),
        fc.tuple(arbText, arbJson).map(([k, v]) => ({ ...valid, [k]: v })),
      )
    : arbJson;
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(valid) },
    { weight: 6, arbitrary: mutated },
    { weight: 2, arbitrary: arbJson },
  );
}

/** How the body goes on the wire: JSON, raw (possibly broken) text, another content type, or none. */
export type WireBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; contentType: string; text: string }
  | { kind: 'none' };

export function arbWireBody(valid: Record<string, unknown>): fc.Arbitrary<WireBody> {
  return fc.oneof(
    { weight: 8, arbitrary: arbBodyAround(valid).map((value) => ({ kind: 'json' as const, value })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            'application/json',
            'application/json; charset=utf-16',
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/merge-patch+json',
            'multipart/form-data; boundary=x',
          ),
          fc.oneof(
            arbText,
            fc.constantFrom('{', '{"a":', '[1,2', '{"a":1}}', 'nul', '\ufeff{}', '{"__proto__":{"x":1}}'),
          ),
        )
        .map(([contentType, text]) => ({ kind: 'raw' as const, contentType, text })),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  );
}

/** Header values HTTP allows (visible ASCII and spaces), including hostile ones. */
export const arbHeaderValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
  fc.constantFrom('', ' ', 'null', 'Bearer ', 'Bearer x', `gw_${'A'.repeat(300)}`, '../', '%00'),
);

/** One path segment as a client may send it: encoded text, malformed escapes, traversal. */
export const arbPathSegment: fc.Arbitrary<string> = fc.oneof(
  fc
    .string({ unit: 'binary', maxLength: 30 })
    .map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, 'x'))),
  fc.constantFrom('%', '%ZZ', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%00', '..', '%2e%2e', '%2F', 'a%20b', ''),
  fc.integer({ min: 1, max: 3000 }).map((n) => 'a'.repeat(n)),
);

/** Applies a wire body to a request. */
export function sendWireBody(req: Test, body: WireBody): Test {
  if (body.kind === 'json')
    return req.set('Content-Type', 'application/json').send(JSON.stringify(body.value) ?? 'null');
  if (body.kind === 'raw') return req.set('Content-Type', body.contentType).send(body.text);
  return req;
}

/**
 * What every answer to a fuzzed request must satisfy: no 5xx (except the
 * listed dependency statuses, which fakes may legitimately produce), and any
 * 4xx carries the JSON error contract (or `errorShape` where the API has its
 * own, e.g. OpenAI's). Returns a description of the violation, or null.
 */
export function contractViolation(
  res: Response,
  opts: { allowStatus?: number[]; errorShape?: (body: unknown) => boolean; html?: boolean } = {},
): string | null {
  const allowed = opts.allowStatus ?? [];
  if (res.status >= 500 && !allowed.includes(res.status))
    return `status ${res.status}: ${res.text.slice(0, 200)}`;
  if (res.status >= 400) {
    if (opts.html && /html/.test(res.type)) return null;
    const ok = (opts.errorShape ?? isErrorContract)(res.body);
    if (!ok) return `status ${res.status} without the error contract: ${res.text.slice(0, 200)}`;
  }
  return null;
}

/** How long a fuzzed request may take before it counts as a hang. */
export const FUZZ_HANG_MS = 10_000;

/**
 * A fuzz test file's seeded runner (see fuzzSettings): `run` checks a property
 * `numRuns` times and stops at the first failure; `expectContract` awaits a
 * request, bounded by FUZZ_HANG_MS, and throws on a contractViolation;
 * `timeout` is the jest timeout of one fuzzed endpoint.
 */
export function fuzzRunner(ciRuns: number) {
  const { numRuns, seed } = fuzzSettings(ciRuns);
  return {
    timeout: numRuns * FUZZ_HANG_MS,
    // biome-ignore lint/suspicious/noExplicitAny: any property arity; fc.assert checks it.
    run: (property: fc.IAsyncProperty<any>) => fc.assert(property, { numRuns, seed, endOnFailure: true }),
    async expectContract(req: Test, opts?: Parameters<typeof contractViolation>[1]): Promise<void> {
      const violation = contractViolation(await req.timeout(FUZZ_HANG_MS), opts);
      if (violation) throw new Error(violation);
    },
  };
}
