import { execFileSync } from 'node:child_process';
import os from 'node:os';

/** Where and on what a run happened; recorded next to every result. */
export type MachineInfo = {
  node: string;
  cpuModel: string;
  cores: number;
  memoryGb: number;
  os: string;
  /** 1-minute load average at start and end: a busy machine (other test runs) shows here. */
  loadAverage: { start: number; end: number };
  postgres: { real: boolean; version: string | null };
  redis: { real: boolean };
};

/** The commit measured; `dirtyFiles` lists uncommitted changes under apps/ and packages/, which the numbers include. */
export type GitInfo = { sha: string; dirtyFiles: string[] };

function git(args: string[]): string {
  return execFileSync('git', args, { encoding: 'utf8', cwd: __dirname }).trim();
}

export function readGitInfo(): GitInfo {
  const status = git(['status', '--porcelain', '--', '../../../apps', '../../../packages']);
  return {
    sha: git(['rev-parse', '--short', 'HEAD']),
    dirtyFiles: status === '' ? [] : status.split('\n').map((line) => line.slice(3)),
  };
}

export function describeMachine(opts: {
  loadAtStart: number;
  postgresVersion: string | null;
  redisReal: boolean;
}): MachineInfo {
  const cpus = os.cpus();
  return {
    node: process.version,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGb: Math.round(os.totalmem() / 1024 ** 3),
    os: `${os.type()} ${os.release()}`,
    loadAverage: { start: opts.loadAtStart, end: Math.round((os.loadavg()[0] ?? 0) * 100) / 100 },
    postgres: { real: opts.postgresVersion !== null, version: opts.postgresVersion },
    redis: { real: opts.redisReal },
  };
}
