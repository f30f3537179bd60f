import { type AnthropicCountTokensRequest, ZAnthropicCountTokensRequest } from '@platform/contract';
import { parseRequestPart } from '@platform/service-kit';
import { selectTargets, type Target } from '../../ai/config/lanes';
import { FallbackExhaustedError } from '../../ai/fallback';
import { UpstreamProtocolError } from '../../ai/providers/upstream-errors';
import { runTargets } from '../../ai/run-targets';
import type { AiRuntime, StoredKeys } from '../../ai/runtime';
import { estimatePromptTokens, estimateTokens } from '../../usage/estimate';
import { modelNotFound } from '../errors';
import { resolveModel } from '../models';
import { speaksMessages } from './prepare-message';
import { toChatParams } from './translate-request';

/** Where a count came from: the provider's count endpoint, or the gateway's tokenizer. */
export type TokenCount = { input_tokens: number; source: 'provider' | 'estimate' };

/** A count_tokens body, validated, with the targets of its model. */
export type PreparedCount = {
  request: AnthropicCountTokensRequest;
  body: Record<string, unknown>;
  lane: string;
  targets: readonly Target[];
};

/** Validates `POST /v1/messages/count_tokens` like a Messages request (shape 422, model 404). */
export function prepareCountTokens(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes'>,
  body: unknown,
): PreparedCount {
  const request = parseRequestPart(ZAnthropicCountTokensRequest, body);
  const resolved = resolveModel(rt, request.model);
  if (!resolved) throw modelNotFound(request.model);
  const targets = selectTargets(rt.config.lanes[resolved.lane]?.targets ?? [], resolved.model);
  if (!targets) throw modelNotFound(request.model);
  return { request, body: body as Record<string, unknown>, lane: resolved.lane, targets };
}

/** The gateway's tokenizer over what an OpenAI-compatible target would be sent: messages and tools. */
function estimateCount(request: AnthropicCountTokensRequest): number {
  const { params } = toChatParams({ ...request, max_tokens: request.max_tokens ?? 1 });
  const tools = params.tools?.length ? estimateTokens(JSON.stringify(params.tools)) : 0;
  return estimatePromptTokens(params.messages) + tools;
}

/**
 * The input tokens of a Messages request. With an Anthropic target in the
 * lane (or the named model), the provider counts it (`count_tokens`, the
 * client's body with the target's model, fallback over those targets);
 * otherwise no provider can, so the gateway's tokenizer estimates it.
 */
export async function countMessageTokens(
  rt: AiRuntime,
  prepared: PreparedCount,
  opts: { storedKeys: StoredKeys; clientSignal: AbortSignal; beta: string | undefined },
): Promise<TokenCount> {
  const anthropic = prepared.targets.filter((t) => speaksMessages(rt, t));
  if (anthropic.length === 0) return { input_tokens: estimateCount(prepared.request), source: 'estimate' };
  const native = {
    format: 'anthropic' as const,
    body: prepared.body,
    ...(opts.beta ? { beta: opts.beta } : {}),
  };
  try {
    const result = await runTargets(rt, {
      endpoint: 'count_tokens',
      targets: anthropic,
      storedKeys: opts.storedKeys,
      clientSignal: opts.clientSignal,
      lane: prepared.lane,
      attempt: ({ target, credential, signal }) => {
        const client = rt.providers.chat(credential);
        if (!client.countTokens) throw new UpstreamProtocolError('no count endpoint');
        return client.countTokens(native, target.model, signal);
      },
    });
    return { input_tokens: result.value, source: 'provider' };
  } catch (err) {
    if (err instanceof FallbackExhaustedError) throw err.error;
    throw err;
  }
}
