// Codex CLI (`@openai/codex`, installed unmodified) driven through the gateway's
// `/v1/responses` with the config.toml docs/gateway-ai.md shows: a multi-turn
// tool task (the model asks for a shell command, Codex runs it, the model reads
// the output and answers) on an OpenAI-protocol target and on an Anthropic target.

import fs from 'node:fs';
import path from 'node:path';
import { codexConfig, runCodex } from './support/codex';
import { writeCompatDoc } from './support/compat-matrix';
import {
  ANTHROPIC_MODEL,
  type ClientGateway,
  ledgerMark,
  ledgerRows,
  OPENAI_MODEL,
  startClientGateway,
} from './support/openai-gateway';
import { checkClient } from './support/record';

jest.setTimeout(240_000);

let gw: ClientGateway;

beforeAll(async () => {
  gw = await startClientGateway();
}, 120_000);
afterAll(async () => {
  await gw?.h.close();
  writeCompatDoc();
});
beforeEach(() => gw.h.resetFakes());

const COMMAND = 'echo codex-ran > proof.txt && cat proof.txt';
const PROMPT = 'Write codex-ran into proof.txt with the shell, then tell me what the file says.';
const CHECKS = 'multi-turn tool task (exec_command), streaming, cache tokens in the ledger';

type Json = Record<string, unknown>;

/** The text of every tool result the upstream was sent, in any of the three protocols. */
function toolResults(body: Json | undefined): string {
  if (Array.isArray(body?.input)) return JSON.stringify(body.input);
  const messages = (body?.messages ?? []) as Json[];
  return messages
    .flatMap((m) => {
      if (m.role === 'tool') return [String(m.content)];
      const blocks = Array.isArray(m.content) ? (m.content as Json[]) : [];
      return blocks.filter((b) => b.type === 'tool_result').map((b) => JSON.stringify(b.content));
    })
    .join('\n');
}

async function expectTaskDone(
  run: Awaited<ReturnType<typeof runCodex>>,
  requests: Array<{ body?: unknown }>,
  mark: bigint,
) {
  if (run.code !== 0) throw new Error(`codex exited ${run.code}: ${run.stderr.slice(-1500)}`);
  expect(fs.readFileSync(path.join(run.workdir, 'proof.txt'), 'utf8')).toBe('codex-ran\n');
  expect(run.stdout).toContain('The file says codex-ran');
  // The second turn carried the command's output back to the model.
  expect(requests.length).toBeGreaterThanOrEqual(2);
  expect(toolResults(requests[1]?.body as Json | undefined)).toContain('codex-ran');
  const rows = await ledgerRows(gw, mark);
  expect(rows.map((r) => [r.endpoint, r.status])).toEqual([
    ['responses-stream', 200],
    ['responses-stream', 200],
  ]);
  expect(rows.map((r) => r.cachedTokens)).toEqual([1000, 1100]);
}

describe('Codex CLI through /v1/responses', () => {
  it('completes a tool task on an OpenAI-protocol target', async () => {
    await checkClient(
      {
        client: '@openai/codex',
        how: '`config.toml` provider, `wire_api = "responses"`, model `gpt`',
        target: 'openai-responses',
        stream: true,
        checks: CHECKS,
      },
      async () => {
        gw.h.openai.enqueue(
          {
            model: OPENAI_MODEL,
            toolCalls: [{ name: 'exec_command', arguments: JSON.stringify({ cmd: COMMAND }) }],
            usage: { prompt_tokens: 1200, completion_tokens: 20, cached_tokens: 1000 },
          },
          {
            model: OPENAI_MODEL,
            content: 'The file says codex-ran.',
            usage: { prompt_tokens: 1300, completion_tokens: 8, cached_tokens: 1100 },
          },
        );
        const mark = await ledgerMark(gw);
        const run = await runCodex(codexConfig(gw.url, 'gpt'), gw.caller.apiKey, PROMPT);
        await expectTaskDone(run, gw.h.openaiRequests(), mark);
      },
    );
  });

  it('completes a tool task on an Anthropic target', async () => {
    await checkClient(
      {
        client: '@openai/codex',
        how: '`config.toml` provider, `wire_api = "responses"`, model `claude`',
        target: 'anthropic',
        stream: true,
        checks: CHECKS,
      },
      async () => {
        gw.h.anthropic.enqueue(
          {
            model: ANTHROPIC_MODEL,
            toolCalls: [{ name: 'exec_command', input: { cmd: COMMAND } }],
            usage: { input_tokens: 200, output_tokens: 20, cache_read_input_tokens: 1000 },
          },
          {
            model: ANTHROPIC_MODEL,
            content: 'The file says codex-ran.',
            usage: { input_tokens: 200, output_tokens: 8, cache_read_input_tokens: 1100 },
          },
        );
        const mark = await ledgerMark(gw);
        const run = await runCodex(codexConfig(gw.url, 'claude'), gw.caller.apiKey, PROMPT);
        await expectTaskDone(run, gw.h.anthropicRequests(), mark);
      },
    );
  });
});
