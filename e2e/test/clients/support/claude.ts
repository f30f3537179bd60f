/**
 * Claude Code as installed from npm (`@anthropic-ai/claude-code`), run headless
 * (`claude -p`) against the gateway: a throwaway HOME and working folder, the
 * gateway's URL and key, telemetry, updates and error reports off. Killed after
 * 100 s; the folders are removed when it exits.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const CLAUDE = path.resolve(__dirname, '../../../../node_modules/.bin/claude');

export type ClaudeResult = { code: number | null; stdout: string; stderr: string };

export function runClaudeCode(opts: {
  /** Everything after `claude`, e.g. `['-p', '…', '--model', 'premium', '--output-format', 'json']`. */
  args: string[];
  baseUrl: string;
  apiKey: string;
  env?: Record<string, string>;
}): Promise<ClaudeResult> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-home-'));
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-cwd-'));
  const child = spawn(CLAUDE, opts.args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      ANTHROPIC_BASE_URL: opts.baseUrl,
      ANTHROPIC_API_KEY: opts.apiKey,
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 100_000);
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      clearTimeout(killer);
      fs.rmSync(home, { recursive: true, force: true });
      fs.rmSync(cwd, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    });
  });
}
