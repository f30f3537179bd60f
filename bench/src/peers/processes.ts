import { type ChildProcess, fork, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
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
 * (pino `"level":"error"`, or anything on stderr) are kept as samples; with
 * BENCH_LOG_DIR set, every line is also written to a file there.
 */
function countOutput(child: ChildProcess, name: string): ServiceProcess['output'] {
  const output = { lines: 0, errorLines: 0, bytes: 0, samples: [] as string[] };
  // BENCH_LOG_DIR keeps every line too (`<dir>/<name>-<pid>.log`), to read what a run's refusals logged.
  const logDir = process.env.BENCH_LOG_DIR;
  if (logDir) {
    mkdirSync(logDir, { recursive: true });
    const file = createWriteStream(path.join(logDir, `${name}-${child.pid}.log`));
    child.stdout?.on('data', (chunk: Buffer) => file.write(chunk));
    child.stderr?.on('data', (chunk: Buffer) => file.write(chunk));
    child.once('exit', () => file.end());
  }
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

/**
 * A copy of the node binary for one service, removed by `remove()`. Pages of a
 * file are shared by every process that maps it: run from the bench's own
 * binary, a service would share the binary's resident pages (~50 MB) with the
 * bench's runner, the fake, the stream client and the other targets, and its
 * PSS would read lower than in its own container. From its own copy (another
 * inode, its own page-cache pages) they are shared only within its process
 * tree, as in production.
 */
function ownNodeBinary(name: string): { path: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), `bench-node-${name}-`));
  const binary = path.join(dir, 'node');
  copyFileSync(process.execPath, binary);
  chmodSync(binary, 0o755);
  return { path: binary, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Starts `node <script>` (plain Node, no tsx) with exactly `env` plus PATH,
 * from its own copy of the node binary (see ownNodeBinary).
 */
export async function startNodeService(opts: {
  name: string;
  script: string;
  args?: string[];
  env: Record<string, string>;
  port: number;
  readyPath: string;
  nodeArgs?: string[];
  /** A command node runs under (`valgrind --tool=callgrind ...`), with a longer start allowed. */
  wrapper?: string[];
}): Promise<ServiceProcess> {
  const binary = ownNodeBinary(opts.name);
  const argv = [binary.path, ...(opts.nodeArgs ?? []), opts.script, ...(opts.args ?? [])];
  const command = [...(opts.wrapper ?? []), ...argv];
  const child = spawn(command[0] as string, command.slice(1), {
    env: { PATH: process.env.PATH ?? '', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = countOutput(child, opts.name);
  const url = `http://127.0.0.1:${opts.port}`;
  const close = async () => {
    await stop(child);
    binary.remove();
  };
  try {
    await waitForHttp(`${url}${opts.readyPath}`, child, opts.wrapper ? 600_000 : 30_000);
  } catch (err) {
    await close();
    throw new Error(`${opts.name} did not start: ${(err as Error).message}\n${output.samples.join('')}`);
  }
  if (child.pid === undefined) throw new Error(`${opts.name}: no pid`);
  return { name: opts.name, url, pid: child.pid, output, close };
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

/**
 * Forks a TypeScript entry of the bench (inherits tsx's loader) that reports
 * `{ url }` over IPC, from its own copy of the node binary (its PSS, like a
 * service's, then shares the binary's pages with no other process).
 */
export async function forkBenchChild<T extends { url: string }>(
  entry: string,
  args: string[],
): Promise<{ info: T; pid: number; child: ChildProcess; close(): Promise<void> }> {
  const binary = ownNodeBinary(path.basename(entry, '.ts'));
  const child = fork(entry, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execPath: binary.path });
  const close = async () => {
    await stop(child);
    binary.remove();
  };
  const info = await new Promise<T>((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before it was ready`)));
  }).catch(async (err) => {
    binary.remove();
    throw err;
  });
  if (child.pid === undefined) throw new Error(`${entry}: no pid`);
  return { info, pid: child.pid, child, close };
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

/**
 * The fields of a /proc/<pid>/smaps_rollup text in kB (`Rss`, `Pss`,
 * `Pss_Anon`, `Pss_File`, ...); empty when the text has none.
 */
export function parseSmapsRollupKb(text: string): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0 || !line.endsWith(' kB')) continue;
    const value = Number(line.slice(colon + 1, -3).trim());
    if (Number.isFinite(value)) fields[line.slice(0, colon)] = value;
  }
  return fields;
}

/**
 * Proportional set size in kB of one process (`Pss:` of /proc/<pid>/smaps_rollup):
 * its private pages plus each shared page divided by the number of processes
 * mapping it. Null when it cannot be read (the process ended, not Linux, or a
 * kernel before 4.14).
 */
export function pssKbOf(pid: number): number | null {
  try {
    return parseSmapsRollupKb(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')).Pss ?? null;
  } catch {
    return null;
  }
}

/**
 * Memory of a process tree in MB, summed over its live processes, from /proc:
 * `rss` (VmRSS) and `peak` (VmHWM, each process's own high-water mark) count
 * every page a process maps, so pages the processes share (the node binary's,
 * ~50 MB per process) are counted once per process, as a naive `ps` sum does;
 * `pss` (smaps_rollup `Pss`) splits each shared page among the processes
 * mapping it, so the sum is what the tree costs the machine. `pss` is null when
 * it cannot be read (not Linux), and skipped (null) with `{ pss: false }`:
 * reading it walks the page tables, dearer than VmRSS.
 */
export function memoryMbOf(
  pid: number,
  tree = processTreeOf(pid),
  opts: { pss?: boolean } = {},
): { rss: number; peak: number; pss: number | null } {
  let rssKb = 0;
  let peakKb = 0;
  let pssKb = 0;
  let pssRead = false;
  let listed = 0;
  for (const member of tree) {
    try {
      const status = readFileSync(`/proc/${member}/status`, 'utf8');
      const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
      rssKb += kb('VmRSS');
      peakKb += kb('VmHWM');
    } catch {
      // The process ended between the listing and the read.
      continue;
    }
    listed += 1;
    if (opts.pss === false) continue;
    // Unreadable for a process that is ending (a zombie has no memory left): it counts nothing.
    const pss = pssKbOf(member);
    if (pss !== null) {
      pssKb += pss;
      pssRead = true;
    }
  }
  // Null when PSS was not asked for, or no live process of the tree had one (not Linux).
  const noPss = opts.pss === false || (listed > 0 && !pssRead);
  return {
    rss: Math.round(rssKb / 1024),
    peak: Math.round(peakKb / 1024),
    pss: noPss ? null : Math.round(pssKb / 1024),
  };
}

/**
 * Samples the memory of a process and its children (summed) until stopped and
 * returns the highest samples: RSS every `everyMs`, PSS every `pssEveryMs` (its
 * read walks every page table of the tree; a peak between two PSS samples is
 * missed, so the PSS peak can read a little low). `pss` is null off Linux.
 */
export function sampleRss(
  pid: number,
  everyMs = 50,
  pssEveryMs = 250,
): { stop(): { rss: number; pss: number | null } } {
  let rss = 0;
  let pss: number | null = 0;
  // Listing /proc is the expensive part: the tree is refreshed once a second, the RSS read every tick.
  let tree = processTreeOf(pid);
  let listedAt = Date.now();
  let pssAt = 0;
  const sample = (withPss: boolean) => {
    const now = memoryMbOf(pid, tree, { pss: withPss });
    rss = Math.max(rss, now.rss);
    if (withPss) pss = now.pss === null || pss === null ? null : Math.max(pss, now.pss);
  };
  const timer = setInterval(() => {
    if (Date.now() - listedAt > 1000) {
      tree = processTreeOf(pid);
      listedAt = Date.now();
    }
    const withPss = pss !== null && Date.now() - pssAt >= pssEveryMs;
    if (withPss) pssAt = Date.now();
    sample(withPss);
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      tree = processTreeOf(pid);
      sample(pss !== null);
      return { rss, pss };
    },
  };
}
