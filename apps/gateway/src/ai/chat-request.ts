import {
  CHAT_LIMITS,
  type ChatCompletionRequest,
  type ChatMessage,
  checkChatRules,
  isStorableText,
  ZChatCompletionRequestShape,
} from '@platform/contract';
import { AppError, zodDetails } from '@platform/errors';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { type LanesConfig, selectTargets, type Target } from './config/lanes';
import type { NativeRequest } from './providers/openai-chat';

/** The upstream request body except `model` (per target) and `stream`. */
export type UpstreamChatParams = Omit<ChatCompletionCreateParamsNonStreaming, 'model' | 'stream'>;

/** The params as one target takes them, and the client's fields left out for it (field policy). */
export type TargetParams = { params: UpstreamChatParams; dropped: readonly string[] };

/**
 * A chat request that passed every rule, whichever API it came in through:
 * the lane and project to account it to, the targets it will try, and what
 * goes upstream.
 */
export type PreparedChat = {
  lane: string;
  projectId: string;
  targets: readonly Target[];
  params: UpstreamChatParams;
  /** The request in its own format, for targets that speak it (see NativeRequest). */
  native?: NativeRequest;
  /**
   * The field policy of the API the request came in through
   * (docs/gateway-ai.md#field-policy): `params` as `target` takes them, what
   * its protocol or provider has no place for removed and named. Absent:
   * `params` go to every target as they are.
   */
  forTarget?: (params: UpstreamChatParams, target: Target) => TargetParams;
};

type Body = Record<string, unknown>;

/** An optional field of the shape that is absent, not present as `undefined` (which zod copies as a key). */
function absent(body: Body, key: string): boolean {
  return !(key in body);
}

/**
 * The common chat body checked by hand, with the result zod gives for it:
 * an object whose fields have their shape's types, messages of a known role
 * and string content. The same checks as ZChatCompletionRequestShape
 * (storable project_id, max_tokens a positive safe integer, numbers finite),
 * the same output (the shape's fields in its order, unknown keys dropped,
 * max_tokens defaulted, each message copied as role and content). Anything
 * else is undefined, and zod parses the body, so every error is zod's: this
 * only spares its generic walk (~2 µs per request) on bodies that pass.
 */
export function commonChatShape(body: unknown): ChatCompletionRequest | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const b = body as Body;
  const { lane, project_id: projectId, messages, model, max_tokens: maxTokens, temperature } = b;
  if (typeof projectId !== 'string' || !isStorableText(projectId) || !Array.isArray(messages))
    return undefined;
  if (lane === undefined ? !absent(b, 'lane') : typeof lane !== 'string') return undefined;
  if (model === undefined ? !absent(b, 'model') : typeof model !== 'string') return undefined;
  if (
    maxTokens === undefined
      ? !absent(b, 'max_tokens')
      : !(typeof maxTokens === 'number' && Number.isSafeInteger(maxTokens) && maxTokens > 0)
  )
    return undefined;
  if (
    temperature === undefined
      ? !absent(b, 'temperature')
      : !(typeof temperature === 'number' && Number.isFinite(temperature))
  )
    return undefined;
  const copied: ChatMessage[] = new Array(messages.length);
  for (let i = 0; i < messages.length; i += 1) {
    const m = messages[i] as unknown;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return undefined;
    const { role, content } = m as Body;
    if (role !== 'user' && role !== 'system' && role !== 'assistant') return undefined;
    if (typeof content !== 'string') return undefined;
    copied[i] = { role, content };
  }
  const out: Body = {};
  if (lane !== undefined) out.lane = lane;
  out.project_id = projectId;
  out.messages = copied;
  if (model !== undefined) out.model = model;
  out.max_tokens = maxTokens ?? CHAT_LIMITS.defaultMaxTokens;
  if (temperature !== undefined) out.temperature = temperature;
  return out as ChatCompletionRequest;
}

/**
 * The native chat body's shape: a wrong one is 422 `deserialization error`
 * (the ZodError goes to the error handler); text that passed the shape but
 * that Postgres cannot store (the shape's only refinement, on project_id)
 * is 400 `validation failed` naming the field.
 */
function parseChatShape(body: unknown): ChatCompletionRequest {
  const common = commonChatShape(body);
  if (common) return common;
  const parsed = ZChatCompletionRequestShape.safeParse(body);
  if (parsed.success) return parsed.data;
  if (parsed.error.issues.every((i) => i.code === 'custom'))
    throw new AppError('validation_failed', { details: zodDetails(parsed.error), cause: parsed.error });
  throw parsed.error;
}

/**
 * Validates a native chat body in the spec's order: a wrong shape is 422
 * `deserialization error` (the ZodError goes to the error handler), then the
 * contract's rules in their fixed precedence, then the lane's model list.
 */
/** What choosing a chat's targets reads: the lanes config and the lanes this server allows. */
export type LanePorts = { config: LanesConfig; allowedLanes: ReadonlySet<string> };

export function prepareChat(rt: LanePorts, body: unknown): PreparedChat {
  const request = parseChatShape(body);
  const violation = checkChatRules(request, rt.allowedLanes);
  if (violation) throw new AppError(violation);
  // checkChatRules guarantees an allowed, hence configured, lane.
  const lane = request.lane as string;
  const laneConfig = rt.config.lanes[lane];
  if (!laneConfig) throw new AppError('unknown_lane');
  const targets = selectTargets(laneConfig.targets, request.model);
  if (!targets) throw new AppError('unknown_model');
  return {
    lane,
    projectId: request.project_id,
    targets,
    // Only what every provider accepts.
    params: {
      messages: request.messages,
      max_tokens: request.max_tokens,
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    },
  };
}
