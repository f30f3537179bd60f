import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

// A load generator for concurrent SSE streams, in a process of its own (forked
// by run-streams.ts): opens `streams` requests at once over fresh keep-alive
// connections (undici Agent, no per-origin limit), timestamps every content
// chunk, and reports percentiles over IPC.

export type StreamClientSpec = {
  url: string;
  headers: Record<string, string>;
  body: string;
  streams: number;
  /** Content chunks each stream must carry (the upstream's `chunks`). */
  expectChunks: number;
  /** The upstream's delay between chunks: chunk k is due k * interval after the first. */
  chunkIntervalMs: number;
  timeoutMs: number;
};

export type Percentiles = { p50: number; p90: number; p99: number; max: number };

export type StreamClientResult = {
  streams: number;
  completed: number;
  failed: number;
  /** Status counts; 0 = connection error. */
  statuses: Record<string, number>;
  firstErrors: string[];
  /** Request start to the first content chunk, ms. */
  ttfcMs: Percentiles;
  /** For every chunk k: arrival - request start - k * interval, ms (how late it is against an ideal upstream). */
  chunkLatenessMs: Percentiles;
  /**
   * For every chunk: arrival - the moment the upstream wrote it (its ` @<µs>`
   * stamp, same monotonic clock), ms. Through the gateway this is the delay the
   * chunk gained on its way; straight from the upstream it is the floor (the
   * client's and the upstream's own queues).
   */
  chunkTransitMs: Percentiles;
  /** Request start to the end of the response, ms. */
  totalMs: Percentiles;
  wallMs: number;
};

/**
 * Each content chunk's text is "c" + two digits, then the upstream's ` @<µs>`
 * write stamp (see run-streams.ts, `stampChunks`); role chunks carry "".
 */
const CONTENT = /"content":"c\d\d @(\d+)/;

/** Microseconds on the host's monotonic clock, as the upstream stamps them. */
const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

function percentiles(values: number[]): Percentiles {
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) =>
    sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0);
  const r = (n: number) => Math.round(n * 10) / 10;
  return { p50: r(at(0.5)), p90: r(at(0.9)), p99: r(at(0.99)), max: r(sorted[sorted.length - 1] ?? 0) };
}

async function runStreams(spec: StreamClientSpec): Promise<StreamClientResult> {
  const dispatcher = new Agent({
    keepAliveTimeout: 10_000,
    headersTimeout: spec.timeoutMs,
    bodyTimeout: spec.timeoutMs,
  });
  const ttfc: number[] = [];
  const lateness: number[] = [];
  const transit: number[] = [];
  const totals: number[] = [];
  const statuses: Record<string, number> = {};
  const firstErrors: string[] = [];
  let completed = 0;
  const one = async () => {
    const start = performance.now();
    let chunks = 0;
    try {
      const res = await request(spec.url, {
        method: 'POST',
        headers: spec.headers,
        body: spec.body,
        dispatcher,
      });
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      let rest = '';
      // The start of a refusal's body (its JSON error and code), for the report.
      let refusal = '';
      res.body.setEncoding('utf8');
      for await (const piece of res.body as AsyncIterable<string>) {
        if (res.statusCode !== 200 && refusal.length < 200) refusal += piece.slice(0, 200 - refusal.length);
        const now = performance.now();
        const us = nowUs();
        const text = rest + piece;
        const lines = text.split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          const stamp = line.startsWith('data:') ? CONTENT.exec(line) : null;
          if (!stamp) continue;
          if (chunks === 0) ttfc.push(now - start);
          lateness.push(now - start - chunks * spec.chunkIntervalMs);
          transit.push((us - Number(stamp[1])) / 1000);
          chunks += 1;
        }
      }
      totals.push(performance.now() - start);
      if (res.statusCode === 200 && chunks === spec.expectChunks) completed += 1;
      else if (firstErrors.length < 5)
        firstErrors.push(`status ${res.statusCode}, ${chunks} chunks${refusal ? `: ${refusal}` : ''}`);
    } catch (err) {
      statuses['0'] = (statuses['0'] ?? 0) + 1;
      if (firstErrors.length < 5) firstErrors.push((err as Error).message);
    }
  };
  const wallStart = performance.now();
  await Promise.all(Array.from({ length: spec.streams }, one));
  const wallMs = Math.round(performance.now() - wallStart);
  await dispatcher.close();
  return {
    streams: spec.streams,
    completed,
    failed: spec.streams - completed,
    statuses,
    firstErrors,
    ttfcMs: percentiles(ttfc),
    chunkLatenessMs: percentiles(lateness),
    chunkTransitMs: percentiles(transit),
    totalMs: percentiles(totals),
    wallMs,
  };
}

process.once('message', (spec: StreamClientSpec) => {
  runStreams(spec)
    .then((result) => process.send?.({ type: 'result', result }))
    .catch((err: unknown) => process.send?.({ type: 'failed', message: String(err) }))
    .finally(() => process.disconnect());
});
