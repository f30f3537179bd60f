import { type AiHarness, startAiHarness, type TestCaller, writeTempJson } from '@platform/gateway/testing';

/**
 * The gateway of the OpenAI-side client tests (issue 38): a real gateway app
 * on loopback (the same harness as its own integration tests) with two lanes,
 * `gpt` on an OpenAI-protocol target and `claude` on an Anthropic target,
 * both answered by the scripted fakes of `@platform/testing`.
 */
export type ClientGateway = { h: AiHarness; url: string; caller: TestCaller };

/** The model (and lane) per target protocol; the fakes are scripted per model. */
export const OPENAI_MODEL = 'gpt-fake';
export const ANTHROPIC_MODEL = 'claude-fake';

export const LANES = {
  lanes: {
    gpt: { default_model: OPENAI_MODEL, targets: [{ provider: 'openai', model: OPENAI_MODEL }] },
    claude: { default_model: ANTHROPIC_MODEL, targets: [{ provider: 'anthropic', model: ANTHROPIC_MODEL }] },
  },
  media: {
    image: [{ provider: 'openai', model: 'dall-e-3' }],
    tts: [{ provider: 'openai', model: 'tts-1' }],
    music: [{ provider: 'elevenlabs', model: 'music_v1' }],
    soundfx: [{ provider: 'elevenlabs', model: 'sfx_v2' }],
  },
};

export async function startClientGateway(env: Record<string, string> = {}): Promise<ClientGateway> {
  const h = await startAiHarness({
    AI_LANES_CONFIG: writeTempJson('lanes.json', LANES),
    AI_ALLOWED_LANES: 'gpt,claude',
    ...env,
  });
  const { url } = await h.listen();
  const caller = await h.createCaller();
  return { h, url, caller };
}

/** The caller's ledger rows written since `afterId` (flushed first). */
export async function ledgerRows(gw: ClientGateway, afterId = BigInt(0)) {
  await gw.h.usage.flush();
  return gw.h.prisma.usageRecord.findMany({
    where: { userId: gw.caller.userId, id: { gt: afterId } },
    orderBy: { id: 'asc' },
  });
}

/** The id of the caller's newest ledger row (0 when none): a mark for ledgerRows. */
export async function ledgerMark(gw: ClientGateway): Promise<bigint> {
  await gw.h.usage.flush();
  const last = await gw.h.prisma.usageRecord.findFirst({
    where: { userId: gw.caller.userId },
    orderBy: { id: 'desc' },
    select: { id: true },
  });
  return last?.id ?? BigInt(0);
}
