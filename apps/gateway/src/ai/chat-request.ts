import { checkChatRules, ZChatCompletionRequestShape } from '@platform/contract';
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

/**
 * The native chat body's shape: a wrong one is 422 `deserialization error`
 * (the ZodError goes to the error handler); text that passed the shape but
 * that Postgres cannot store (the shape's only refinement, on project_id)
 * is 400 `validation failed` naming the field.
 */
function parseChatShape(body: unknown) {
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
