import type { Response } from 'express';
import type { PreparedChat, TargetParams, UpstreamChatParams } from './chat-request';
import type { Target } from './config/lanes';
import { anthropicDroppedParams } from './providers/anthropic-translate';
import type { AiRuntime } from './runtime';

/** The response header naming the request fields the answering target was not sent (comma-separated). */
export const DROPPED_PARAMS_HEADER = 'x-gateway-dropped-params';

const NOTHING_DROPPED: readonly string[] = [];

/** How a request's chat params reach targets of the chat protocol (docs/gateway-ai.md#field-policy). */
export type ChatTargetOptions = {
  /**
   * The params were translated from another API (Responses): fields the client
   * did not choose for a chat target go only where they are known to be
   * taken, `reasoning_effort` to reasoning models and OpenAI's own chat
   * fields to the `openai` provider; elsewhere they are dropped and named.
   */
  translated?: boolean;
};

/** Chat fields of OpenAI's own API that other OpenAI-compatible providers may refuse. */
const OPENAI_ONLY_FIELDS = ['prompt_cache_key', 'safety_identifier', 'service_tier'] as const;

function without(params: UpstreamChatParams, keys: readonly string[]): UpstreamChatParams {
  const out: Record<string, unknown> = { ...params };
  for (const key of keys) delete out[key];
  return out as UpstreamChatParams;
}

/**
 * The token limit under the name the target takes: `max_completion_tokens`
 * for a reasoning model, and wherever the client used that name and the
 * accounting capped `max_tokens` too (one limit, the lower). Otherwise the
 * params as they are.
 */
function withTokenLimit(params: UpstreamChatParams, target: Target): UpstreamChatParams {
  const { max_tokens, max_completion_tokens } = params;
  if (max_tokens == null) return params;
  if (!target.reasoning_model && max_completion_tokens == null) return params;
  const { max_tokens: _dropped, ...rest } = params;
  return { ...rest, max_completion_tokens: Math.min(max_tokens, max_completion_tokens ?? max_tokens) };
}

/**
 * The chat params as `target` takes them. An OpenAI-protocol target gets them
 * as they are, except the fields its provider is configured to refuse
 * (`providers.<name>.unsupported_params`) and the token limit under the name
 * it takes (withTokenLimit). An Anthropic target gets the translation (anthropic-translate.ts),
 * which leaves out what has no equivalent; those fields are named.
 */
export function chatParamsFor(
  rt: Pick<AiRuntime, 'config' | 'catalog'>,
  params: UpstreamChatParams,
  target: Target,
  opts: ChatTargetOptions = {},
): TargetParams {
  const refused = rt.config.providers[target.provider]?.unsupported_params;
  const set = (key: string) => (params as Record<string, unknown>)[key] != null;
  const dropped = refused?.filter(set) ?? [];
  if (opts.translated) {
    if (!target.reasoning_model && set('reasoning_effort')) dropped.push('reasoning_effort');
    if (target.provider !== 'openai') dropped.push(...OPENAI_ONLY_FIELDS.filter(set));
  }
  if (rt.catalog.get(target.provider)?.api === 'anthropic') {
    return { params, dropped: [...new Set([...dropped, ...anthropicDroppedParams(params)])] };
  }
  const out = dropped.length > 0 ? without(params, dropped) : params;
  return { params: withTokenLimit(out, target), dropped: dropped.length > 0 ? dropped : NOTHING_DROPPED };
}

/** Names come from the client's keys: only plain ones are shown (a header cannot carry any text). */
const SHOWN_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** At most this many names are shown; a body of thousands of unknown keys does not make a huge header. */
const MAX_SHOWN = 32;

/** The dropped names as shown: plain names only, at most MAX_SHOWN, then `...`. */
export function shownDroppedParams(dropped: readonly string[]): string[] {
  const plain = dropped.filter((name) => SHOWN_NAME.test(name));
  return plain.length > MAX_SHOWN ? [...plain.slice(0, MAX_SHOWN), '...'] : plain;
}

/**
 * Names the fields the answering target was not sent: the
 * `x-gateway-dropped-params` header (while headers can still be set) and a
 * debug log line. Field names only, never values.
 */
export function announceDroppedParams(
  rt: Pick<AiRuntime, 'logger'>,
  res: Response,
  prepared: PreparedChat,
  target: Target,
): void {
  if (!prepared.forTarget) return;
  const dropped = shownDroppedParams(prepared.forTarget(prepared.params, target).dropped);
  if (dropped.length === 0) return;
  if (!res.headersSent) res.setHeader(DROPPED_PARAMS_HEADER, dropped.join(','));
  rt.logger.debug(
    { dropped, provider: target.provider, model: target.model },
    'request fields dropped for the target',
  );
}
