// Claude Code (@anthropic-ai/claude-code, installed unmodified from npm) through the gateway:
// headless `claude -p`, a Bash tool round trip, against the scripted upstream fakes.
//
// Isolation: no `unshare -n` (the gateway and the fakes would have to run inside the same
// namespace). Instead the client gets a throwaway HOME, every non-essential traffic switch
// off, and only the gateway's loopback URL; the fakes log every request they get, and the
// test checks that each one came from this run.

import {
  type AiHarness,
  startAiHarness,
  TEST_LANES,
  type TestCaller,
  writeTempJson,
} from '@platform/gateway/testing';
import { anthropicAgentTurns, chatAgentTurns } from '@platform/testing';
import { type ClaudeResult, runClaudeCode } from './support/claude';
import { type CompatTarget, installedVersion, recordCompat, writeCompatDoc } from './support/compat-matrix';

const CLIENT = '@anthropic-ai/claude-code';

/**
 * `premium` serves Claude models from the Anthropic fake (passed through); `standard` an
 * OpenAI-compatible model (translated). Neither lane name is a model Claude Code knows.
 */
const LANES = {
  lanes: {
    premium: {
      default_model: 'claude-sonnet-4-5',
      targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5' }],
    },
    standard: { default_model: 'gpt-4.1-mini', targets: [{ provider: 'openai', model: 'gpt-4.1-mini' }] },
  },
  media: TEST_LANES.media,
  prices: {
    'anthropic/claude-sonnet-4-5': { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 },
    'openai/gpt-4.1-mini': { input: 1, output: 4, cached_input: 0.25 },
  },
};

/** Two parallel Bash calls; the fake's final answer quotes what Claude Code ran. */
const TURNS = {
  tool: 'Bash',
  inputs: [
    { command: 'echo hi', description: 'Print hi' },
    { command: 'echo there', description: 'Print there' },
  ],
  answerPrefix: 'Bash printed:',
};

let h: AiHarness;
let url: string;
let caller: TestCaller;

beforeAll(async () => {
  h = await startAiHarness({
    AI_LANES_CONFIG: writeTempJson('lanes.json', LANES),
    AI_ALLOWED_LANES: 'premium,standard',
    AI_UPSTREAM_TIMEOUT_MS: '20000',
  });
  ({ url } = await h.listen());
  caller = await h.createCaller();
}, 120_000);

afterAll(async () => {
  await h?.close();
  writeCompatDoc();
});

beforeEach(() => h.resetFakes());

/** Runs `claude -p` headless against the gateway, in a throwaway HOME and working folder. */
function runClaude(model: string | undefined, extraEnv: Record<string, string> = {}): Promise<ClaudeResult> {
  const args = ['-p', 'Run echo hi and echo there with Bash.', ...(model ? ['--model', model] : [])];
  return runClaudeCode({
    args: [...args, '--allowedTools', 'Bash', '--output-format', 'json'],
    baseUrl: url,
    apiKey: caller.apiKey,
    env: extraEnv,
  });
}

/** Method, path and status of each request the gateway answered since log line `mark`. */
function gatewayAnswers(mark: number) {
  return h.logs.lines
    .slice(mark)
    .map(
      (line) =>
        JSON.parse(line) as {
          msg?: string;
          req?: { method?: string; url?: string };
          res?: { statusCode?: number };
        },
    )
    .filter((entry) => entry.msg === 'request completed')
    .map((entry) => ({ request: `${entry.req?.method} ${entry.req?.url}`, status: entry.res?.statusCode }));
}

/** The caller's ledger rows written since `since` (exclusive). */
async function rowsSince(since: bigint) {
  await h.usage.flush();
  return h.prisma.usageRecord.findMany({
    where: { userId: caller.userId, id: { gt: since } },
    orderBy: { id: 'asc' },
  });
}

async function lastRowId(): Promise<bigint> {
  await h.usage.flush();
  const last = await h.prisma.usageRecord.findFirst({
    where: { userId: caller.userId },
    orderBy: { id: 'desc' },
    select: { id: true },
  });
  return last?.id ?? BigInt(0);
}

type Turn = { role: string; content: unknown };
type Case = {
  how: string;
  /** `--model`; none when `env` names the models. */
  model?: string;
  env?: Record<string, string>;
  target: CompatTarget;
  upstreamModel: string;
  /** Claude Code does not know the name, so it sends `role: "system"` turns (issue 38). */
  systemTurns: boolean;
};

const CASES: Case[] = [
  {
    how: 'model `claude-sonnet-4-5`',
    model: 'claude-sonnet-4-5',
    target: 'anthropic',
    upstreamModel: 'claude-sonnet-4-5',
    systemTurns: false,
  },
  {
    how: 'model `premium` (a lane)',
    model: 'premium',
    target: 'anthropic',
    upstreamModel: 'claude-sonnet-4-5',
    systemTurns: true,
  },
  {
    how: 'model `premium/claude-sonnet-4-5` (`<lane>/<model>`)',
    model: 'premium/claude-sonnet-4-5',
    target: 'anthropic',
    upstreamModel: 'claude-sonnet-4-5',
    systemTurns: false,
  },
  {
    how: 'model `gpt-4.1-mini` (an OpenAI-compatible target)',
    model: 'gpt-4.1-mini',
    target: 'openai-chat',
    upstreamModel: 'gpt-4.1-mini',
    systemTurns: true,
  },
  {
    // The set-up docs/gateway-ai.md shows, as written there.
    how: '`ANTHROPIC_MODEL=premium ANTHROPIC_SMALL_FAST_MODEL=premium` (docs/gateway-ai.md)',
    env: { ANTHROPIC_MODEL: 'premium', ANTHROPIC_SMALL_FAST_MODEL: 'premium' },
    target: 'anthropic',
    upstreamModel: 'claude-sonnet-4-5',
    systemTurns: true,
  },
];

describe('Claude Code through the gateway', () => {
  it.each(CASES)(
    '$how: a parallel Bash tool round trip, streamed, usage recorded',
    async (c) => {
      const checks = 'two parallel Bash calls run, streamed answer, usage with cache tokens in the ledger';
      const row = {
        client: CLIENT,
        version: installedVersion(CLIENT),
        how: c.how,
        target: c.target,
        stream: true,
      };
      recordCompat({ ...row, checks, result: 'fail', note: 'did not finish' });
      if (c.target === 'anthropic') {
        h.anthropic.respond(
          anthropicAgentTurns(TURNS, {
            thinking: 'The user wants two commands run.',
            usage: {
              input_tokens: 30,
              output_tokens: 12,
              cache_read_input_tokens: 400,
              cache_creation_input_tokens: 50,
            },
          }),
        );
      } else {
        h.openai.respond(
          chatAgentTurns(TURNS, { usage: { prompt_tokens: 480, completion_tokens: 12, cached_tokens: 400 } }),
        );
      }
      const since = await lastRowId();

      const logMark = h.logs.lines.length;
      const run = await runClaude(c.model, c.env);

      const detail = `exit ${run.code}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}`;
      expect({ code: run.code, detail }).toEqual({ code: 0, detail });
      const result = JSON.parse(run.stdout) as { is_error: boolean; result: string };
      expect(result.is_error).toBe(false);
      // Claude Code ran both commands and sent their output back: the fake quoted it.
      expect(result.result).toMatch(/Bash printed: (hi \| there|there \| hi)/);

      // Every request Claude Code made (main turns, side requests with its small model) was answered.
      const requests = gatewayAnswers(logMark);
      expect(requests.length).toBeGreaterThanOrEqual(2);
      expect(requests.filter((a) => a.status !== 200)).toEqual([]);

      const upstream = c.target === 'anthropic' ? h.anthropicRequests() : h.openaiRequests();
      const turns = upstream.filter((r) => JSON.stringify(r.body ?? {}).includes('"Bash"'));
      // The tool call, then the answer to its results: both streamed, both to the expected model.
      expect(turns.length).toBeGreaterThanOrEqual(2);
      for (const r of turns) {
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ model: c.upstreamModel, stream: true });
      }
      const messages = (r: (typeof turns)[number]) => (r.body as { messages: Turn[] }).messages;
      const answerTurn = turns.find((r) => JSON.stringify(messages(r)).includes('"tool_result"'));
      if (c.target === 'anthropic') {
        // The thinking block (and its signature) came back to Anthropic as it left.
        const assistant = answerTurn ? messages(answerTurn).filter((m) => m.role === 'assistant') : [];
        expect(JSON.stringify(assistant)).toContain('"signature":"sig_fake"');
        // Names Claude Code does not know get its mid-conversation system turns: passed through as sent.
        if (c.systemTurns) expect(turns.some((r) => messages(r).some((m) => m.role === 'system'))).toBe(true);
      } else {
        // Translated: system turns folded into the one leading system message.
        for (const r of turns)
          expect(
            messages(r)
              .map((m) => m.role)
              .lastIndexOf('system'),
          ).toBe(0);
      }

      const rows = await rowsSince(since);
      const answered = rows.filter((r) => r.endpoint === 'messages-stream' && r.status === 200);
      expect(answered.length).toBeGreaterThanOrEqual(2);
      for (const r of answered) {
        expect(r).toMatchObject({ model: c.upstreamModel, cachedTokens: 400 });
        if (c.target === 'anthropic')
          expect(r).toMatchObject({ provider: 'anthropic', cacheWriteTokens: 50 });
      }
      recordCompat({ ...row, checks, result: 'pass' });
    },
    180_000,
  );
});
