import { type ChildProcess, fork, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A service running in its own process, on loopback. */
export type ServiceProcess = {
  name: string;
  url: string;
  pid: number;
  /** Lines the process wrote to stdout/stderr, and the first lines at error level (ours: pino JSON). */
  output: { lines: number; errorLines: number; bytes: number; samples: string[] };
  close(): Promise<void>;
};

export const REPO_ROOT = path.join(__dirname, '..', '..', '..');

/** Polls `url` until it answers (any status) or the deadline passes. */
async function waitForHttp(url: string, child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: process exited with code ${child.exitCode}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
      await sleep(100);
    }
  }
}

/**
 * Counts the child's output lines as a container runtime would read them from a
 * pipe: the bytes are consumed and counted, never printed. Lines at error level
 * (pino `"level":"error"`, or anything on stderr) are kept as samples.
 */
function countOutput(child: ChildProcess): ServiceProcess['output'] {
  const output = { lines: 0, errorLines: 0, bytes: 0, samples: [] as string[] };
  const count = (isStderr: boolean) => (chunk: Buffer) => {
    output.bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) output.lines += 1;
    const text = isStderr || chunk.includes('"level":"error"') ? chunk.toString('utf8') : '';
    if (text) {
      output.errorLines += isStderr ? text.split('\n').filter(Boolean).length : 1;
      if (output.samples.length < 5) output.samples.push(text.slice(0, 600));
    }
  };
  child.stdout?.on('data', count(false));
  child.stderr?.on('data', count(true));
  return output;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Starts `node <script>` (plain Node, no tsx) with exactly `env` plus PATH. */
export async function startNodeService(opts: {
  name: string;
  script: string;
  args?: string[];
  env: Record<string, string>;
  port: number;
  readyPath: string;
  nodeArgs?: string[];
}): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.script, ...(opts.args ?? [])], {
    env: { PATH: process.env.PATH ?? '', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = countOutput(child);
  const url = `http://127.0.0.1:${opts.port}`;
  try {
    await waitForHttp(`${url}${opts.readyPath}`, child);
  } catch (err) {
    await stop(child);
    throw new Error(`${opts.name} did not start: ${(err as Error).message}\n${output.samples.join('')}`);
  }
  if (child.pid === undefined) throw new Error(`${opts.name}: no pid`);
  return { name: opts.name, url, pid: child.pid, output, close: () => stop(child) };
}

/**
 * Awaits a service's start; if it fails, closes the services already started
 * (last first) before rethrowing, so a failed run leaves no child behind.
 */
export async function startOrClose<T>(
  starting: Promise<T>,
  started: Array<{ close(): Promise<void> }>,
): Promise<T> {
  try {
    return await starting;
  } catch (err) {
    for (const service of [...started].reverse()) await service.close().catch(() => undefined);
    throw err;
  }
}

/** Forks a TypeScript entry of the bench (inherits tsx's loader) that reports `{ url }` over IPC. */
export async function forkBenchChild<T extends { url: string }>(
  entry: string,
  args: string[],
): Promise<{ info: T; pid: number; child: ChildProcess; close(): Promise<void> }> {
  const child = fork(entry, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const info = await new Promise<T>((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before it was ready`)));
  });
  if (child.pid === undefined) throw new Error(`${entry}: no pid`);
  return { info, pid: child.pid, child, close: () => stop(child) };
}

function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command: state is index 0, ppid 1, utime 11, stime 12, cutime 13, cstime 14.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * `pid` and every live process under it (a service in cluster mode is a
 * primary and its workers), from the ppid of each process in /proc.
 */
export function processTreeOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const child = Number(entry);
    if (!Number.isInteger(child) || child <= 0) continue;
    const parent = Number(statFields(child)?.[1]);
    if (!Number.isInteger(parent)) continue;
    const list = children.get(parent);
    if (list) list.push(child);
    else children.set(parent, [child]);
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i += 1) tree.push(...(children.get(tree[i] as number) ?? []));
  return tree;
}

/**
 * user+system CPU time in ms (clock ticks, 100 per second on Linux) of a
 * process and everything under it: the live processes' own time, plus what
 * finished children left in their parent's cutime/cstime (a replaced worker).
 */
export function cpuMsOf(pid: number): number {
  const { user, system } = cpuSplitMsOf(pid);
  return user + system;
}

/** cpuMsOf split into user and system (kernel: syscalls, and loopback TCP work done on the sender's behalf). */
export function cpuSplitMsOf(pid: number): { user: number; system: number } {
  let user = 0;
  let system = 0;
  for (const member of processTreeOf(pid)) {
    const fields = statFields(member);
    if (!fields) continue;
    user += Number(fields[11]) + Number(fields[13]);
    system += Number(fields[12]) + Number(fields[14]);
  }
  return { user: user * 10, system: system * 10 };
}

/** Current and peak resident memory in MB (VmRSS, VmHWM) of a process and its live children, summed, from /proc. */
export function memoryMbOf(pid: number, tree = processTreeOf(pid)): { rss: number; peak: number } {
  let rssKb = 0;
  let peakKb = 0;
  for (const member of tree) {
    try {
      const status = readFileSync(`/proc/${member}/status`, 'utf8');
      const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
      rssKb += kb('VmRSS');
      peakKb += kb('VmHWM');
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return { rss: Math.round(rssKb / 1024), peak: Math.round(peakKb / 1024) };
}

/** Samples the RSS of a process and its children (summed) every `everyMs` until stopped; returns the highest sample. */
export function sampleRss(pid: number, everyMs = 50): { stop(): number } {
  let max = 0;
  // Listing /proc is the expensive part: the tree is refreshed once a second, the RSS read every tick.
  let tree = processTreeOf(pid);
  let listedAt = Date.now();
  const timer = setInterval(() => {
    if (Date.now() - listedAt > 1000) {
      tree = processTreeOf(pid);
      listedAt = Date.now();
    }
    max = Math.max(max, memoryMbOf(pid, tree).rss);
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(max, memoryMbOf(pid).rss);
    },
  };
}
