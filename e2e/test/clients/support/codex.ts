import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const E2E_ROOT = path.resolve(__dirname, '../../..');
const CODEX_BIN = require.resolve('@openai/codex/bin/codex.js', { paths: [E2E_ROOT] });

/** The environment variable Codex reads the gateway key from (`env_key`). */
export const CODEX_KEY_VAR = 'GATEWAY_API_KEY';

const DOC = path.resolve(E2E_ROOT, '../docs/gateway-ai.md');

/** The ```toml block of docs/gateway-ai.md's "Codex CLI" section, as written there. */
export function documentedCodexConfig(): string {
  const doc = fs.readFileSync(DOC, 'utf8');
  const section = doc.slice(doc.indexOf('#### Codex CLI'));
  const start = section.indexOf('```toml\n');
  const end = section.indexOf('```', start + 8);
  if (start < 0 || end < 0) throw new Error('no ```toml block under "#### Codex CLI" in docs/gateway-ai.md');
  return section.slice(start + 8, end);
}

function replaceOnce(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`the documented Codex config no longer has ${from}`);
  return text.replace(from, to);
}

/**
 * `$CODEX_HOME/config.toml` pointing Codex at the gateway: the block
 * docs/gateway-ai.md shows, with only the example host and lane replaced,
 * plus what a test run needs (no approvals, no sandbox in its throwaway
 * folder, no telemetry), so the documented set-up is what is tested.
 */
export function codexConfig(gatewayUrl: string, model: string): string {
  let documented = documentedCodexConfig();
  documented = replaceOnce(documented, 'https://gateway.example.com/v1', `${gatewayUrl}/v1`);
  documented = replaceOnce(documented, 'model = "standard"', `model = "${model}"`);
  documented = replaceOnce(documented, `env_key = "${CODEX_KEY_VAR}"`, `env_key = "${CODEX_KEY_VAR}"`);
  return [
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    documented,
    '[analytics]',
    'enabled = false',
    '',
    '[otel]',
    'exporter = "none"',
    '',
  ].join('\n');
}

export type CodexRun = { code: number | null; stdout: string; stderr: string; workdir: string };

/**
 * Runs `codex exec --skip-git-repo-check <prompt>` in a fresh work folder
 * with a throwaway HOME and CODEX_HOME holding only `config`; stdin is
 * closed so Codex reads no more input. Killed after `timeoutMs`.
 */
export async function runCodex(
  config: string,
  apiKey: string,
  prompt: string,
  timeoutMs = 90_000,
): Promise<CodexRun> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-e2e-'));
  const home = path.join(root, 'home');
  const codexHome = path.join(home, '.codex');
  const workdir = path.join(root, 'work');
  fs.mkdirSync(codexHome, { recursive: true });
  fs.mkdirSync(workdir);
  fs.writeFileSync(path.join(codexHome, 'config.toml'), config);
  const child = spawn(process.execPath, [CODEX_BIN, 'exec', '--skip-git-repo-check', prompt], {
    cwd: workdir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      CODEX_HOME: codexHome,
      [CODEX_KEY_VAR]: apiKey,
      RUST_LOG: 'error',
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
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr, workdir };
}
