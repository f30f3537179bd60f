import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  memoryMbOf,
  parseSmapsRollupKb,
  processTreeOf,
  pssKbOf,
  sampleRss,
  startNodeService,
} from '../src/peers/processes';

// The bench's memory readings (bench/README.md): RSS summed over a process
// tree counts shared pages once per process, PSS splits them. These read
// /proc and need Linux, as the bench does.

const ROLLUP = `55d0c0a00000-7ffd1b7f7000 ---p 00000000 00:00 0                          [rollup]
Rss:              102400 kB
Pss:               61234 kB
Pss_Dirty:         40960 kB
Pss_Anon:          40960 kB
Pss_File:          20274 kB
Pss_Shmem:             0 kB
Shared_Clean:      55000 kB
Private_Dirty:     40960 kB
`;

describe('parseSmapsRollupKb', () => {
  it('reads every kB field of smaps_rollup, and nothing from the address line', () => {
    const fields = parseSmapsRollupKb(ROLLUP);
    expect(fields).toEqual({
      Rss: 102400,
      Pss: 61234,
      Pss_Dirty: 40960,
      Pss_Anon: 40960,
      Pss_File: 20274,
      Pss_Shmem: 0,
      Shared_Clean: 55000,
      Private_Dirty: 40960,
    });
  });

  it('gives no field for a text without any (not Linux, an empty read)', () => {
    expect(parseSmapsRollupKb('')).toEqual({});
    expect(parseSmapsRollupKb('Pss: lots\n')).toEqual({});
  });
});

/** A node child that idles until killed, from the same binary as this process. */
function idleChild() {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  return child;
}

describe('memoryMbOf and pssKbOf on live processes', () => {
  it('reads this process: a PSS above zero and at most its RSS', () => {
    const pss = pssKbOf(process.pid);
    expect(pss).not.toBeNull();
    const own = memoryMbOf(process.pid, [process.pid]);
    expect(own.rss).toBeGreaterThan(0);
    expect(own.pss).toBeGreaterThan(0);
    expect(own.pss as number).toBeLessThanOrEqual(own.rss);
    expect(own.peak).toBeGreaterThanOrEqual(own.rss);
    expect(memoryMbOf(process.pid, [process.pid], { pss: false }).pss).toBeNull();
  });

  it('sums a tree: two children of the same binary share its pages, so their PSS sum is below their RSS sum', async () => {
    const children = [idleChild(), idleChild()];
    try {
      // Both have started and mapped the binary.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const pids = children.map((c) => c.pid as number);
      expect(processTreeOf(process.pid)).toEqual(expect.arrayContaining(pids));
      const both = memoryMbOf(process.pid, pids);
      const each = pids.map((pid) => memoryMbOf(pid, [pid]));
      expect(both.rss).toBeGreaterThanOrEqual(each[0]!.rss + each[1]!.rss - 1);
      // An idle node is ~40 MB RSS, most of it the binary's pages, shared with this process and the other child.
      expect(both.pss as number).toBeLessThan(both.rss - 20);
    } finally {
      for (const c of children) c.kill('SIGKILL');
    }
  });

  it('a process that has ended counts nothing', async () => {
    const child = idleChild();
    const pid = child.pid as number;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    expect(pssKbOf(pid)).toBeNull();
    expect(memoryMbOf(pid, [pid])).toEqual({ rss: 0, peak: 0, pss: 0 });
  });
});

describe('a process that is ending', () => {
  it('counts nothing while it is a zombie, and the rest of the tree still has a PSS', async () => {
    const child = idleChild();
    const pid = child.pid as number;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGKILL');
    // Node reaps the child on a later turn of the event loop: until then it is a zombie.
    const state = () => /^State:\s+(\w)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    const until = Date.now() + 2_000;
    while (state() !== 'Z' && Date.now() < until);
    expect(state()).toBe('Z');
    expect(pssKbOf(pid)).toBeNull();
    const tree = memoryMbOf(process.pid, [process.pid, pid]);
    const alone = memoryMbOf(process.pid, [process.pid]);
    expect(tree.pss).not.toBeNull();
    expect(Math.abs((tree.pss as number) - (alone.pss as number))).toBeLessThanOrEqual(1);
    await exited;
  });
});

describe('sampleRss', () => {
  it('returns the highest RSS and PSS it saw, at least what the process holds at the end', async () => {
    const sampler = sampleRss(process.pid, 10, 20);
    const held = Buffer.alloc(32 * 1024 * 1024, 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const peak = sampler.stop();
    const now = memoryMbOf(process.pid, [process.pid]);
    expect(held[held.length - 1]).toBe(1);
    expect(peak.rss).toBeGreaterThanOrEqual(now.rss - 1);
    expect(peak.pss).not.toBeNull();
    expect(peak.pss as number).toBeGreaterThanOrEqual(32);
  });
});

describe('startNodeService', () => {
  it('runs the service from its own copy of the node binary, and removes the copy when closed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bench-processes-test-'));
    const script = path.join(dir, 'server.js');
    writeFileSync(
      script,
      "require('node:http').createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');",
    );
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const service = await startNodeService({
      name: 'test',
      script,
      env: { PORT: String(port) },
      port,
      readyPath: '/',
    });
    const binary = readlinkSync(`/proc/${service.pid}/exe`);
    try {
      expect(binary).not.toBe(readlinkSync('/proc/self/exe'));
      expect(path.basename(binary)).toBe('node');
      expect(await (await fetch(service.url)).text()).toBe('ok');
    } finally {
      await service.close();
    }
    expect(existsSync(binary)).toBe(false);
  });
});
