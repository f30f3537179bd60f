import fs from 'node:fs';

/**
 * Largest write the kernel keeps whole on a pipe shared by several writers
 * (PIPE_BUF on Linux). Cluster workers all write to the primary's stdout; a
 * longer write may be split and another worker's bytes land in the middle of
 * a line.
 */
export const ATOMIC_WRITE_BYTES = 4096;

/** Where the writer's chunks go; the default writes to a file descriptor. Tests record. */
export type ChunkSink = {
  /** Writes some of `chunk`; calls back with how many bytes went out. */
  write(chunk: Buffer, done: (err: NodeJS.ErrnoException | null, written: number) => void): void;
  /** Same, blocking; returns how many bytes went out. */
  writeSync(chunk: Buffer): number;
};

export type LineWriterOptions = {
  /** File descriptor to write to (default 1, stdout). Ignored when `sink` is given. */
  fd?: number;
  sink?: ChunkSink;
  /** Upper bound of one write, in bytes (default ATOMIC_WRITE_BYTES). */
  maxBytes?: number;
  /** A batch that has not filled up is written after this long (default 100 ms). */
  flushMs?: number;
  /** Flushes synchronously when the process exits (default true). */
  flushOnExit?: boolean;
};

export type LineWriter = {
  /** Takes one or more whole lines (pino writes one line per call). */
  write(chunk: string): boolean;
  /** Writes everything buffered, blocking; called on exit and by `logger.flush()`. */
  flushSync(): void;
  /** Starts writing what is buffered now, without waiting for the batch to fill. */
  flush(cb?: (err?: Error) => void): void;
};

const RETRY_MS = 10;

function fdSink(fd: number): ChunkSink {
  return {
    write: (chunk, done) => fs.write(fd, chunk, 0, chunk.length, null, (err, n) => done(err, n)),
    writeSync: (chunk) => fs.writeSync(fd, chunk, 0, chunk.length, null),
  };
}

function isBusy(err: NodeJS.ErrnoException): boolean {
  return err.code === 'EAGAIN' || err.code === 'EBUSY';
}

/**
 * A pino destination that batches lines (up to `maxBytes` or `flushMs`,
 * whichever comes first) and writes them asynchronously, one write in flight
 * at a time, like sonic-boom's `minLength` mode, but never cuts a batch inside
 * a line and never issues a write larger than `maxBytes`, so lines from
 * several processes sharing one pipe never interleave. A single line longer
 * than `maxBytes` is written on its own (the kernel may then split it; nothing
 * can prevent that).
 */
export function createLineWriter(opts: LineWriterOptions = {}): LineWriter {
  const sink = opts.sink ?? fdSink(opts.fd ?? 1);
  const maxBytes = opts.maxBytes ?? ATOMIC_WRITE_BYTES;
  const flushMs = opts.flushMs ?? 100;
  /** Lines of the batch being collected. */
  let batch: string[] = [];
  let batchBytes = 0;
  /** Batches ready to go, oldest first; the head is in flight while `writing`. */
  const ready: Buffer[] = [];
  let writing = false;
  let timer: NodeJS.Timeout | undefined;
  let flushWaiters: Array<(err?: Error) => void> = [];

  const cut = (): void => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (batch.length === 0) return;
    ready.push(Buffer.from(batch.join(''), 'utf8'));
    batch = [];
    batchBytes = 0;
  };

  const settleWaiters = (err?: Error): void => {
    const waiters = flushWaiters;
    flushWaiters = [];
    for (const w of waiters) w(err);
  };

  const pump = (): void => {
    if (writing) return;
    const head = ready[0];
    if (!head) {
      settleWaiters();
      return;
    }
    writing = true;
    sink.write(head, (err, written) => {
      writing = false;
      if (err) {
        if (isBusy(err)) {
          setTimeout(pump, RETRY_MS).unref();
          return;
        }
        // Nowhere to report a broken stdout; drop this batch rather than retry forever.
        ready.shift();
        settleWaiters(err);
      } else if (written < head.length) ready[0] = head.subarray(written);
      else ready.shift();
      pump();
    });
  };

  const write = (chunk: string): boolean => {
    const bytes = Buffer.byteLength(chunk, 'utf8');
    if (batchBytes > 0 && batchBytes + bytes > maxBytes) cut();
    batch.push(chunk);
    batchBytes += bytes;
    if (batchBytes >= maxBytes) cut();
    else if (!timer) {
      timer = setTimeout(() => {
        timer = undefined;
        cut();
        pump();
      }, flushMs);
      timer.unref();
    }
    pump();
    return true;
  };

  const flushSync = (): void => {
    cut();
    // The head may be in the hands of an asynchronous write already; it is not written twice.
    let i = writing ? 1 : 0;
    while (i < ready.length) {
      const buf = ready[i] as Buffer;
      try {
        const written = sink.writeSync(buf);
        if (written < buf.length) ready[i] = buf.subarray(written);
        else i++;
      } catch (err) {
        if (!isBusy(err as NodeJS.ErrnoException)) throw err;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RETRY_MS);
      }
    }
    ready.splice(writing ? 1 : 0);
  };

  const flush = (cb?: (err?: Error) => void): void => {
    cut();
    if (cb) flushWaiters.push(cb);
    pump();
  };

  if (opts.flushOnExit !== false) process.once('exit', () => flushSync());
  return { write, flushSync, flush };
}
