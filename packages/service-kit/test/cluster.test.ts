import os from 'node:os';
import { planProcesses } from '../src/cluster';
import { parseWorkers } from '../src/workers';

const external = { DATABASE_URL: 'postgresql://db/x', REDIS_URL: 'redis://r/0' };

describe('WORKERS', () => {
  it('accepts auto (also when unset or empty) and positive integers only', () => {
    expect([undefined, '', 'auto', ' auto '].map(parseWorkers)).toEqual(['auto', 'auto', 'auto', 'auto']);
    expect(['1', '2', '16'].map(parseWorkers)).toEqual([1, 2, 16]);
    expect(['0', '-1', '1.5', 'two', '02', '1e3', '99999'].map(parseWorkers)).toEqual(
      Array(7).fill(undefined),
    );
  });
});

describe('planProcesses', () => {
  it('forks one worker per available CPU for auto with external storage', () => {
    const cpus = os.availableParallelism();
    expect(planProcesses({ ...external })).toEqual(
      cpus > 1 ? { mode: 'cluster', workers: cpus } : { mode: 'single' },
    );
    expect(planProcesses({ ...external, WORKERS: '3' })).toEqual({ mode: 'cluster', workers: 3 });
  });

  it('runs one process without a primary for WORKERS=1', () => {
    expect(planProcesses({ ...external, WORKERS: '1' })).toEqual({ mode: 'single' });
  });

  it('runs one process in embedded mode and says why when more were asked for', () => {
    expect(planProcesses({ REDIS_URL: 'redis://r/0', WORKERS: '4' })).toEqual({
      mode: 'single',
      warning: expect.stringContaining('DATABASE_URL is not set'),
    });
    expect(planProcesses({ DATABASE_URL: 'postgresql://db/x', WORKERS: '4' }).mode).toBe('single');
    expect(planProcesses({ WORKERS: '1' })).toEqual({ mode: 'single' });
  });

  it('refuses anything but auto or a positive integer', () => {
    expect(() => planProcesses({ ...external, WORKERS: '0' })).toThrow(
      'WORKERS must be "auto" or a positive integer',
    );
  });
});
