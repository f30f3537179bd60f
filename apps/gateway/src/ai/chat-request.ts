import { type ChatCompletionRequest, checkChatRules, ZChatCompletionRequestShape } from '@platform/contract';
import { AppError } from '@platform/errors';
import { selectTargets, type Target } from './lanes';
import type { AiRuntime } from './runtime';

/** A chat request that passed every rule, with the targets it will try. */
export type PreparedChat = {
  request: ChatCompletionRequest;
  lane: string;
  targets: readonly Target[];
};

/**
 * Validates a chat body in the spec's order: a wrong shape is 422
 * `deserialization error` (the ZodError goes to the error handler), then the
 * contract's rules in their fixed precedence, then the lane's model list.
 */
export function prepareChat(rt: Pick<AiRuntime, 'config' | 'allowedLanes'>, body: unknown): PreparedChat {
  const request = ZChatCompletionRequestShape.parse(body);
  const violation = checkChatRules(request, rt.allowedLanes);
  if (violation) throw new AppError(violation);
  // checkChatRules guarantees an allowed, hence configured, lane.
  const lane = request.lane as string;
  const laneConfig = rt.config.lanes[lane];
  if (!laneConfig) throw new AppError('unknown_lane');
  const targets = selectTargets(laneConfig.targets, request.model);
  if (!targets) throw new AppError('unknown_model');
  return { request, lane, targets };
}
