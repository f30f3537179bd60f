import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describeWith, needChromium, needPostgres, needRedis, needSharedServers } from '../src/servers';
import { freePort, portSlice } from '../src/servers/process';

/** Runs `fn` with these environment variables set (undefined: unset), then restores them. */
function withEnv<T>(vars: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>) => {
    for (const [k, value] of Object.entries(v)) {
      if (value === undefined) delete process.env[k];
      else process.env[k] = value;
    }
  };
  apply(vars);
  try {
    return fn();
  } finally {
    apply(saved);
  }
}

/** No TEST_* servers and no server binaries: PATH is empty, Debian's versioned folders aside. */
const BARE = { TEST_REDIS_URL: undefined, TEST_DATABASE_URL: undefined, PATH: '', CI: undefined };

describe('a need the machine lacks', () => {
  it('names what to set or install, for the shared and the private kind', () => {
    withEnv(BARE, () => {
      expect(needRedis().missing).toBe('set TEST_REDIS_URL, or install redis-server to let it start its own');
      expect(needRedis({ private: true }).missing).toMatch(/^install redis-server/);
    });
  });

  it('skips the block after ONE line on stderr naming the test and what it needs', () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const chosen = withEnv(BARE, () => describeWith('the x test (x.int.test.ts)', needRedis()));
      expect(chosen).toBe(describe.skip);
      expect(write.mock.calls).toEqual([
        [
          'skipped: the x test (x.int.test.ts) needs Redis (set TEST_REDIS_URL, or install redis-server to let it start its own)\n',
        ],
      ]);
    } finally {
      write.mockRestore();
    }
  });

  it('names the test file when no name is given, and every need it lacks', () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      withEnv({ ...BARE, CHROMIUM_PATH: '/nonexistent/chromium' }, () =>
        describeWith(needRedis(), needChromium()),
      );
      expect(write).toHaveBeenCalledTimes(1);
      expect(String(write.mock.calls[0]?.[0])).toMatch(
        /^skipped: packages\/testing\/test\/servers\.test\.ts needs Redis \(.*\) and Chromium \(apt-get install -y chromium .*\/nonexistent\/chromium\)\n$/,
      );
    } finally {
      write.mockRestore();
    }
  });

  it('fails the file under CI instead of skipping it', () => {
    withEnv({ ...BARE, CI: 'true' }, () => {
      expect(() => describeWith('the x test', needRedis())).toThrow(
        'the x test needs Redis (set TEST_REDIS_URL, or install redis-server to let it start its own) (under CI nothing may be skipped)',
      );
    });
  });

  it('never starts: start() fails naming the missing binary', async () => {
    const need = withEnv({ CHROMIUM_PATH: '/nonexistent/chromium' }, () => needChromium());
    await expect(need.start()).rejects.toThrow('Chromium is missing');
  });
});

describe('a TEST_* server', () => {
  it('is used as given, shared, and never stopped by the test', async () => {
    const env = {
      TEST_REDIS_URL: 'redis://127.0.0.1:1/3',
      TEST_DATABASE_URL: 'postgresql://u@127.0.0.1:1/x',
      PATH: '',
    };
    const [redis, postgres] = withEnv(env, () => [needRedis(), needPostgres()]);
    expect(redis?.missing).toBeUndefined();
    expect(postgres?.missing).toBeUndefined();
    const [r, p] = await Promise.all([redis!.start(), postgres!.start()]);
    expect(r).toMatchObject({ url: env.TEST_REDIS_URL, shared: true });
    expect(p).toMatchObject({ url: env.TEST_DATABASE_URL, shared: true });
    await expect(r.close()).resolves.toBeUndefined();
  });

  it('is not what a fault test gets: it needs a server of its own to stop', () => {
    withEnv({ TEST_REDIS_URL: 'redis://127.0.0.1:1/3', PATH: '' }, () => {
      expect(needRedis({ private: true }).missing).toMatch(/^install redis-server/);
    });
  });

  it('with it the block runs, and nothing is printed', () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const chosen = withEnv({ TEST_REDIS_URL: 'redis://127.0.0.1:1/3', PATH: '' }, () =>
        describeWith('the x test', needRedis()),
      );
      expect(chosen).toBe(describe);
      expect(write).not.toHaveBeenCalled();
    } finally {
      write.mockRestore();
    }
  });
});

describe('a combination of needs', () => {
  it('names each part it lacks, once', () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      withEnv({ ...BARE, TEST_DATABASE_URL: 'postgresql://u@127.0.0.1:1/x' }, () =>
        describeWith('the x test', needSharedServers()),
      );
      expect(write.mock.calls).toEqual([
        [
          'skipped: the x test needs Redis (set TEST_REDIS_URL, or install redis-server to let it start its own)\n',
        ],
      ]);
    } finally {
      write.mockRestore();
    }
  });
});

describe('freePort', () => {
  it('hands out distinct ports below the kernel ephemeral range, free to bind', async () => {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) expect(port).toBeLessThan(low as number);
    for (const port of ports) {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("draws from this Jest worker's own slice of the range", async () => {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    const [from, to] = portSlice(15000, low as number, process.env.JEST_WORKER_ID);
    expect(to - from).toBeLessThan((low as number) - 15000);
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(from);
      expect(port).toBeLessThan(to);
    }
  });
});

describe('portSlice', () => {
  it('gives each Jest worker its own part of the fixed ports, and the whole range outside Jest', () => {
    const slices = [1, 2, 3, 4].map((id) => portSlice(15000, 32768, String(id)));
    expect(slices[0]).toEqual([15000, 16110]);
    expect(slices[1]).toEqual([16110, 17220]);
    for (let i = 1; i < slices.length; i++) expect(slices[i]?.[0]).toBe(slices[i - 1]?.[1]);
    expect(portSlice(15000, 32768, '17')).toEqual(slices[0]);
    expect(portSlice(15000, 32768, undefined)).toEqual([15000, 32768]);
    expect(portSlice(15000, 32768, 'x')).toEqual([15000, 32768]);
  });
});
