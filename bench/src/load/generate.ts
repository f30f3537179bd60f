import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import type { LatencySummary, LoadResult, LoadSpec } from './types';

function toOptions(spec: LoadSpec, durationSec: number): autocannon.Options {
  const options: autocannon.Options = {
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    connections: spec.connections,
    duration: durationSec,
    timeout: spec.timeoutSec,
  };
  if (spec.body !== undefined) options.body = spec.body;
  const prefix = spec.randomApiKeyPrefix;
  const randomAddress = spec.randomClientAddress === true;
  if (prefix !== undefined || randomAddress) {
    options.requests = [
      {
        setupRequest: (req) => {
          const headers = { ...req.headers };
          if (prefix !== undefined)
            headers['x-api-key'] = `${prefix}${randomBytes(22).toString('hex').slice(0, 43)}`;
          if (randomAddress) headers['x-forwarded-for'] = `10.${[...randomBytes(3)].join('.')}`;
          return { ...req, headers };
        },
      },
    ];
  }
  return options;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? 0;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

function summarise(latencies: number[]): LatencySummary {
  const sorted = Float64Array.from(latencies).sort();
  const sum = latencies.reduce((a, b) => a + b, 0);
  return {
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.length > 0 ? (sorted[sorted.length - 1] ?? 0) : 0),
    mean: round(latencies.length > 0 ? sum / latencies.length : 0),
  };
}

function runOnce(
  options: autocannon.Options,
  onResponse?: (status: number, ms: number) => void,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (err: unknown, result: autocannon.Result) => {
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve(result);
    });
    if (onResponse) instance.on('response', (_client, status, _bytes, ms) => onResponse(status, ms));
  });
}

function statusCounts(result: autocannon.Result): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [status, stat] of Object.entries(result.statusCodeStats ?? {})) counts[status] = stat.count ?? 0;
  return counts;
}

/**
 * Warm-up run (discarded, but its statuses are kept for checking), then the
 * measured run. Latencies are taken from every response with autocannon's
 * sub-millisecond response time, not from its whole-millisecond histogram.
 */
export async function generateLoad(spec: LoadSpec, onMeasureStart: () => void): Promise<LoadResult> {
  const warm = spec.warmupSec > 0 ? await runOnce(toOptions(spec, spec.warmupSec)) : undefined;
  onMeasureStart();
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const result = await runOnce(toOptions(spec, spec.durationSec), (status, ms) => {
    latencies.push(ms);
    statuses[status] = (statuses[status] ?? 0) + 1;
  });
  const requests = latencies.length;
  return {
    requests,
    durationSec: result.duration,
    requestsPerSec: Math.round((requests / result.duration) * 10) / 10,
    latencyMs: summarise(latencies),
    statuses,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    warmup: {
      requests: warm ? Object.values(statusCounts(warm)).reduce((a, b) => a + b, 0) : 0,
      statuses: warm ? statusCounts(warm) : {},
      errors: warm?.errors ?? 0,
    },
  };
}
