import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { planProcesses } from '../src/cluster';
import { cgroupCpuLimit, usableCpus } from '../src/cpu-limit';
import { databasePoolSize, servingProcesses } from '../src/workers';

/** A fake cgroup tree: `files` maps paths under the mount to contents; `self` is /proc/self/cgroup. */
function fakeCgroup(self: string, files: Record<string, string>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cgroup-'));
  const root = path.join(dir, 'sys/fs/cgroup');
  fs.mkdirSync(root, { recursive: true });
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  const selfCgroup = path.join(dir, 'self-cgroup');
  fs.writeFileSync(selfCgroup, self);
  return { root, selfCgroup };
}

// A Docker/Kubernetes cgroup v1 node: the controller mounted as cpu,cpuacct.
const V1_SELF = [
  '12:memory:/kubepods/pod1/abc',
  '4:cpu,cpuacct:/kubepods/pod1/abc',
  '3:cpuset:/kubepods/pod1/abc',
  '0::/',
].join('\n');

describe('cgroupCpuLimit', () => {
  it('reads a cgroup v2 cpu.max quota, rounded up', () => {
    const files = fakeCgroup('0::/\n', { 'cpu.max': '150000 100000\n' });
    expect(cgroupCpuLimit(files)).toBe(2);
  });

  it('reads cgroup v2 "max" as no limit', () => {
    const files = fakeCgroup('0::/\n', { 'cpu.max': 'max 100000\n' });
    expect(cgroupCpuLimit(files)).toBeUndefined();
  });

  it('takes the tightest quota on the v2 path up to the root', () => {
    const files = fakeCgroup('0::/kubepods/pod1/abc\n', {
      'kubepods/pod1/abc/cpu.max': 'max 100000',
      'kubepods/pod1/cpu.max': '100000 100000',
      'kubepods/cpu.max': '400000 100000',
    });
    expect(cgroupCpuLimit(files)).toBe(1);
  });

  it('reads a cgroup v1 CFS quota, where node sees every host core', () => {
    const files = fakeCgroup(V1_SELF, {
      'cpu,cpuacct/kubepods/pod1/abc/cpu.cfs_quota_us': '100000\n',
      'cpu,cpuacct/kubepods/pod1/abc/cpu.cfs_period_us': '100000\n',
    });
    expect(cgroupCpuLimit(files)).toBe(1);
  });

  it('reads the v1 controller mounted at the container root (no cgroup namespace path)', () => {
    const files = fakeCgroup(V1_SELF, {
      'cpu,cpuacct/cpu.cfs_quota_us': '250000',
      'cpu,cpuacct/cpu.cfs_period_us': '100000',
    });
    expect(cgroupCpuLimit(files)).toBe(3);
  });

  it('reads v1 quota -1 as no limit, and no cgroup files at all as no limit', () => {
    const unlimited = fakeCgroup(V1_SELF, {
      'cpu,cpuacct/cpu.cfs_quota_us': '-1',
      'cpu,cpuacct/cpu.cfs_period_us': '100000',
    });
    expect(cgroupCpuLimit(unlimited)).toBeUndefined();
    expect(cgroupCpuLimit(fakeCgroup('', {}))).toBeUndefined();
    expect(cgroupCpuLimit({ root: '/nonexistent', selfCgroup: '/nonexistent/cgroup' })).toBeUndefined();
  });
});

describe('usableCpus and WORKERS=auto', () => {
  it('caps the scheduler count by the cgroup quota', () => {
    const files = fakeCgroup(V1_SELF, {
      'cpu,cpuacct/kubepods/pod1/abc/cpu.cfs_quota_us': '100000',
      'cpu,cpuacct/kubepods/pod1/abc/cpu.cfs_period_us': '100000',
    });
    expect(usableCpus(files, 64)).toBe(1);
    expect(usableCpus(fakeCgroup('0::/\n', { 'cpu.max': '800000 100000' }), 4)).toBe(4);
    expect(usableCpus(fakeCgroup('0::/\n', {}), 6)).toBe(6);
  });

  it('plans one worker per usable CPU', () => {
    const external = { DATABASE_URL: 'postgresql://db/x', REDIS_URL: 'redis://r/0' };
    expect(planProcesses({ ...external, WORKERS: 'auto' }, () => 1)).toEqual({ mode: 'single' });
    expect(planProcesses({ ...external }, () => 3)).toEqual({ mode: 'cluster', workers: 3 });
  });
});

describe('databasePoolSize: every worker of every replica within the budget', () => {
  it.each([
    // budget, replicas, workers -> pool per process
    [20, 1, 1, 20],
    [20, 1, 8, 2],
    [30, 4, 2, 3],
    [50, 12, 2, 2],
    [20, 3, 4, 2],
  ])('budget %i over %i replicas x %i workers -> %i each', (budget, replicas, workers, pool) => {
    expect(databasePoolSize({ budget, replicas, workers })).toBe(pool);
    // Never above the budget unless it cannot be kept (two connections per process at least).
    expect(pool * replicas * workers <= budget || pool === 2).toBe(true);
  });

  it('defaults to a budget of 20 for one replica, and an explicit DATABASE_POOL_MAX wins', () => {
    expect(databasePoolSize({ workers: 4 })).toBe(5);
    expect(databasePoolSize({ workers: 4, budget: 100, replicas: 2, poolMax: 7 })).toBe(7);
  });

  it('counts the workers the primary resolved, or one for a single process', () => {
    expect(servingProcesses({ WORKERS: '4' }, true)).toBe(4);
    expect(servingProcesses({ WORKERS: '4' }, false)).toBe(1);
    expect(servingProcesses({ WORKERS: 'auto' }, true)).toBe(1);
  });
});
