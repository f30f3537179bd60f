import {
  type ApiKeyRules,
  allowedTargets,
  assertLaneAllowed,
  modelAllowed,
  type RuleTarget,
} from '../key-rules/rules';

/** The part of a request a key's lane and model lists apply to. */
export type TargetedRequest<T extends RuleTarget = RuleTarget> = {
  endpoint: string;
  lane: string | null;
  /** A chat's targets, narrowed in place to what the key allows. */
  chat?: { targets: readonly T[] } | undefined;
  /** The targets of a route that holds its own list (media, embeddings). */
  targets?: readonly T[] | undefined;
};

/**
 * A key's lane and model lists applied to a request before it is reserved:
 * a lane off the list is 403; a chat keeps only the targets the model list
 * allows (fallback stays within them), 403 when none is left. A request
 * whose route holds its own target list (media, embeddings) is refused
 * unless the model list allows every target it may use. A media request
 * without a lane is checked under its endpoint's name (image, tts, ...).
 */
export function applyKeyTargetRules<T extends RuleTarget>(
  rules: ApiKeyRules | undefined,
  request: TargetedRequest<T>,
): void {
  if (!rules) return;
  assertLaneAllowed(rules, request.lane ?? request.endpoint);
  if (!rules.models) return;
  const chat = request.chat;
  if (chat) {
    chat.targets = allowedTargets(rules, chat.targets);
    return;
  }
  const models = rules.models;
  const denied = (request.targets ?? []).filter((t) => !modelAllowed(models, t));
  // Throws naming the models off the list.
  if (denied.length > 0) allowedTargets({ models }, denied);
}
