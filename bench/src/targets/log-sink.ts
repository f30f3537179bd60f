/** Log lines by level, so a run can refuse to record while the service logs errors. */
export type LogCounts = { lines: number; warn: number; error: number };

/**
 * A pino destination that serialises like production but keeps nothing
 * (no terminal I/O in the numbers, no memory growth): it counts lines per level
 * and keeps the first few warnings and errors for the report.
 */
export type LogSink = {
  write(line: string): void;
  counts(): LogCounts;
  samples: string[];
};

const MAX_SAMPLES = 5;

export function createLogSink(): LogSink {
  const counts: LogCounts = { lines: 0, warn: 0, error: 0 };
  const samples: string[] = [];
  return {
    write(line) {
      counts.lines += 1;
      if (line.includes('"level":"warn"')) counts.warn += 1;
      else if (line.includes('"level":"error"') || line.includes('"level":"fatal"')) counts.error += 1;
      else return;
      if (samples.length < MAX_SAMPLES) samples.push(line.slice(0, 600));
    },
    counts: () => ({ ...counts }),
    samples,
  };
}
