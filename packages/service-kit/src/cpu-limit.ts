import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * How many CPUs this process may use: the smaller of the CPUs it may be
 * scheduled on (`os.availableParallelism()`) and its cgroup's CPU quota,
 * rounded up. Read here because Node follows the quota only on cgroup v2 hosts
 * (libuv): on a cgroup v1 node `--cpus 1` still reported every host core, and
 * `WORKERS=auto` forked one worker per host core into a 512 MiB pod.
 * Kept to node built-ins: the cluster primary loads nothing else.
 */

export type CgroupFiles = {
  /** Where the cgroup hierarchy is mounted; default /sys/fs/cgroup. */
  root?: string;
  /** This process's cgroup membership; default /proc/self/cgroup. */
  selfCgroup?: string;
};

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** `quota / period` rounded up, or undefined for no limit or unreadable values. */
function quotaCpus(quota: number, period: number): number | undefined {
  if (!Number.isFinite(quota) || !Number.isFinite(period) || quota <= 0 || period <= 0) return undefined;
  return Math.max(1, Math.ceil(quota / period));
}

/** Each folder from `dir` up to `root`, nearest first (a limit may sit on a parent cgroup). */
function upTo(root: string, relative: string): string[] {
  const dirs: string[] = [];
  let rel = path.posix.normalize(`/${relative}`);
  for (;;) {
    dirs.push(path.join(root, rel));
    if (rel === '/') return dirs;
    rel = path.posix.dirname(rel);
  }
}

/** The cgroup v2 limit: `cpu.max` ("<quota> <period>" or "max <period>") on the process's cgroup or a parent. */
function cgroupV2Cpus(root: string, membership: string): number | undefined {
  const line = membership.split('\n').find((l) => l.startsWith('0::'));
  if (line === undefined) return undefined;
  let limit: number | undefined;
  // In a container with its own cgroup namespace the path is "/" and the mount is its own cgroup.
  for (const dir of upTo(root, line.slice(3).trim() || '/')) {
    const text = readText(path.join(dir, 'cpu.max'));
    if (text === undefined) continue;
    const [quota, period] = text.trim().split(/\s+/);
    const cpus = quota === 'max' ? undefined : quotaCpus(Number(quota), Number(period));
    if (cpus !== undefined) limit = Math.min(limit ?? cpus, cpus);
  }
  return limit;
}

/** The cgroup v1 limit: `cpu.cfs_quota_us` / `cpu.cfs_period_us` of the `cpu` controller (-1: none). */
function cgroupV1Cpus(root: string, membership: string): number | undefined {
  for (const line of membership.split('\n')) {
    const [, controllers, relative] = splitLine(line);
    if (!controllers.split(',').includes('cpu')) continue;
    // The controller is mounted as "cpu,cpuacct" (with a "cpu" link) on most distributions.
    for (const mount of [controllers, 'cpu', 'cpu,cpuacct']) {
      let limit: number | undefined;
      let found = false;
      for (const dir of upTo(path.join(root, mount), relative || '/')) {
        const quota = readText(path.join(dir, 'cpu.cfs_quota_us'));
        const period = readText(path.join(dir, 'cpu.cfs_period_us'));
        if (quota === undefined || period === undefined) continue;
        found = true;
        const cpus = quotaCpus(Number(quota.trim()), Number(period.trim()));
        if (cpus !== undefined) limit = Math.min(limit ?? cpus, cpus);
      }
      if (found) return limit;
    }
  }
  return undefined;
}

/** "<id>:<controllers>:<path>", where the path itself may contain ':'. */
function splitLine(line: string): [string, string, string] {
  const first = line.indexOf(':');
  const second = first < 0 ? -1 : line.indexOf(':', first + 1);
  if (second < 0) return ['', '', ''];
  return [line.slice(0, first), line.slice(first + 1, second), line.slice(second + 1)];
}

/** The CPU quota of this process's cgroup (v2, else v1), rounded up; undefined when there is none. */
export function cgroupCpuLimit(files: CgroupFiles = {}): number | undefined {
  const root = files.root ?? '/sys/fs/cgroup';
  const membership = readText(files.selfCgroup ?? '/proc/self/cgroup');
  if (membership === undefined) return undefined;
  return cgroupV2Cpus(root, membership) ?? cgroupV1Cpus(root, membership);
}

/** CPUs for `WORKERS=auto`: the scheduler's count capped by the cgroup quota. */
export function usableCpus(files: CgroupFiles = {}, available = os.availableParallelism()): number {
  const limit = cgroupCpuLimit(files);
  return Math.max(1, Math.min(available, limit ?? available));
}
