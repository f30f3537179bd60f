import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { type ChunkSink, createLineWriter } from '../src/line-writer';

const run = promisify(execFile);

/** Records every chunk; `partial` makes each asynchronous write take only that many bytes. */
function recordingSink(opts: { partial?: number } = {}): ChunkSink & {
  chunks: string[];
  /** The bytes of each asynchronous write (a partial write may end inside a character). */
  raw: Buffer[];
  syncChunks: string[];
  text(): string;
} {
  const chunks: string[] = [];
  const syncChunks: string[] = [];
  const raw: Buffer[] = [];
  return {
    chunks,
    raw,
    syncChunks,
    write(chunk, done) {
      const n = Math.min(chunk.length, opts.partial ?? chunk.length);
      raw.push(Buffer.from(chunk.subarray(0, n)));
      chunks.push(chunk.subarray(0, n).toString('utf8'));
      setImmediate(() => done(null, n));
    },
    writeSync(chunk) {
      syncChunks.push(chunk.toString('utf8'));
      return chunk.length;
    },
    text: () => [...chunks, ...syncChunks].join(''),
  };
}

const line = (i: number, pad = 80) => `${JSON.stringify({ i, msg: 'é'.repeat(pad) })}\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('line writer', () => {
  it('collects small lines and writes them together after flushMs', async () => {
    const sink = recordingSink();
    const w = createLineWriter({ sink, flushMs: 30, flushOnExit: false });
    w.write(line(1));
    w.write(line(2));
    w.write(line(3));
    expect(sink.chunks).toEqual([]);
    await sleep(80);
    expect(sink.chunks).toEqual([line(1) + line(2) + line(3)]);
  });

  it('never writes more than maxBytes nor cuts a line, counting bytes rather than characters', async () => {
    const sink = recordingSink();
    const w = createLineWriter({ sink, flushMs: 20, flushOnExit: false });
    const lines = Array.from({ length: 300 }, (_, i) => line(i, i % 50));
    for (const l of lines) w.write(l);
    await sleep(60);
    expect(sink.text()).toBe(lines.join(''));
    expect(sink.chunks.length).toBeGreaterThanOrEqual(Math.ceil(Buffer.byteLength(lines.join('')) / 4096));
    for (const chunk of sink.chunks) {
      expect(Buffer.byteLength(chunk)).toBeLessThanOrEqual(4096);
      expect(chunk.endsWith('\n')).toBe(true);
    }
    // Batches are full: each one could not take the next line.
    const sizes = sink.chunks.map((c) => Buffer.byteLength(c));
    expect(sizes.slice(0, -1).every((s) => s > 4096 - 200)).toBe(true);
  });

  it('writes a line longer than maxBytes alone', async () => {
    const sink = recordingSink();
    const w = createLineWriter({ sink, flushMs: 20, flushOnExit: false });
    const long = `${'x'.repeat(10_000)}\n`;
    w.write(line(1));
    w.write(long);
    w.write(line(2));
    await sleep(60);
    expect(sink.chunks).toEqual([line(1), long, line(2)]);
  });

  it('finishes a write the kernel took only part of', async () => {
    const sink = recordingSink({ partial: 1000 });
    const w = createLineWriter({ sink, flushMs: 10, flushOnExit: false });
    const lines = Array.from({ length: 100 }, (_, i) => line(i));
    for (const l of lines) w.write(l);
    await sleep(100);
    expect(Buffer.concat(sink.raw).toString('utf8')).toBe(lines.join(''));
  });

  it('flushSync writes the pending lines at once, without writing the one in flight twice', () => {
    const sink = recordingSink();
    const w = createLineWriter({ sink, flushMs: 10_000, flushOnExit: false });
    const lines = Array.from({ length: 80 }, (_, i) => line(i));
    for (const l of lines) w.write(l);
    // The first full batch went to the asynchronous write; the rest waits.
    expect(sink.chunks).toHaveLength(1);
    w.flushSync();
    expect(sink.text()).toBe(lines.join(''));
    for (const chunk of sink.syncChunks) expect(Buffer.byteLength(chunk)).toBeLessThanOrEqual(4096);
  });

  it('flush(cb) calls back once everything buffered is written', async () => {
    const sink = recordingSink();
    const w = createLineWriter({ sink, flushMs: 10_000, flushOnExit: false });
    w.write(line(1));
    await new Promise<void>((resolve, reject) => w.flush((err) => (err ? reject(err) : resolve())));
    expect(sink.chunks).toEqual([line(1)]);
  });

  it('flushes what is buffered when the process exits (the default logger on stdout)', async () => {
    const loggerPath = path.join(__dirname, '..', 'src', 'logger.ts');
    const script = [
      `const { createLogger } = require(${JSON.stringify(loggerPath)});`,
      "const log = createLogger({ service: 'exit-test' });",
      "for (let i = 0; i < 500; i++) log.info({ i }, 'line');",
      'process.exit(0);',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--conditions=source', '--import', 'tsx', '-e', script], {
      cwd: path.join(__dirname, '..'),
    });
    const entries = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { i: number; pid: number; service: string });
    expect(entries.map((e) => e.i)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(entries[0]).toMatchObject({ service: 'exit-test', pid: expect.any(Number) });
  });
});
