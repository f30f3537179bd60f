import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

/** What the service process did during the measured window. */
export type ProcessSample = {
  /** User + system CPU of the service process (service, its fakes, and in inproc mode the load generator). */
  cpuMs: number;
  /** Event-loop delay: how long ready callbacks waited; a high p99 here explains latency spikes. */
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  gc: { count: number; totalMs: number; maxMs: number };
  rssMb: number;
};

const round = (n: number) => Math.round(n * 100) / 100;

/** Starts sampling the current process; stop() returns the totals since start. */
export function startProcessProbe(): { stop(): ProcessSample } {
  const cpuStart = process.cpuUsage();
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const gc = { count: 0, totalMs: 0, maxMs: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count += 1;
      gc.totalMs += entry.duration;
      gc.maxMs = Math.max(gc.maxMs, entry.duration);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      loop.disable();
      observer.disconnect();
      const cpu = process.cpuUsage(cpuStart);
      return {
        cpuMs: round((cpu.user + cpu.system) / 1000),
        eventLoopDelayMs: {
          p50: round(loop.percentile(50) / 1e6),
          p99: round(loop.percentile(99) / 1e6),
          max: round(loop.max / 1e6),
        },
        gc: { count: gc.count, totalMs: round(gc.totalMs), maxMs: round(gc.maxMs) },
        rssMb: Math.round(process.memoryUsage().rss / 1048576),
      };
    },
  };
}
