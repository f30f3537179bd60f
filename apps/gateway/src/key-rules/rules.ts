import { type ApiKeyRules, ZApiKeyRules } from '@platform/contract';
import { AppError } from '@platform/errors';

export type { ApiKeyRules };

/** Where a request may go: a lane target's provider and model. */
export type RuleTarget = { provider: string; model: string };

/**
 * A key's rules as stored (api_keys.rules). What the gateway wrote passed
 * ZApiKeyRules; a row that does not parse any more (edited by hand) allows
 * nothing rather than everything: an empty lane list refuses every lane.
 */
export function storedRulesOf(value: unknown): ApiKeyRules | undefined {
  if (value === null || value === undefined) return undefined;
  const parsed = ZApiKeyRules.safeParse(value);
  return parsed.success ? parsed.data : { lanes: [] };
}

/** Whether `target` is on the model list: `provider/model` or the bare model id. */
export function modelAllowed(models: readonly string[], target: RuleTarget): boolean {
  return models.includes(target.model) || models.includes(`${target.provider}/${target.model}`);
}

/** 401 `api key expired` once `expiresAt` (ms) has passed. */
export function assertKeyLive(identity: { expiresAt?: number | undefined }, now: number): void {
  if (identity.expiresAt !== undefined && identity.expiresAt <= now) {
    throw new AppError('api_key_expired', {
      details: [
        {
          path: 'key.expires_at',
          message: `the key expired at ${new Date(identity.expiresAt).toISOString()}`,
        },
      ],
    });
  }
}

/** 403 `lane not allowed for this api key` when the key's lane list does not name `lane`. */
export function assertLaneAllowed(rules: ApiKeyRules | undefined, lane: string): void {
  if (!rules?.lanes || rules.lanes.includes(lane)) return;
  throw new AppError('key_lane_not_allowed', {
    details: [
      { path: 'key.lanes', message: `lane ${lane} is not in the key's lanes (${rules.lanes.join(', ')})` },
    ],
  });
}

/**
 * The targets the key's model list allows, or 403 `model not allowed for
 * this api key` when it allows none of them. Without a model list: `targets`.
 */
export function allowedTargets<T extends RuleTarget>(
  rules: ApiKeyRules | undefined,
  targets: readonly T[],
): readonly T[] {
  const models = rules?.models;
  if (!models) return targets;
  const allowed = targets.filter((t) => modelAllowed(models, t));
  if (allowed.length > 0) return allowed;
  const asked = targets.map((t) => `${t.provider}/${t.model}`).join(', ');
  throw new AppError('key_model_not_allowed', {
    details: [
      { path: 'key.models', message: `none of ${asked} is in the key's models (${models.join(', ')})` },
    ],
  });
}
