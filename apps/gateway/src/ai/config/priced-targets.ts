import type { GatewayEnv } from '../../env';
import { type ModelPrice, priceOf } from '../../usage/pricing';
import { type LanesConfig, LanesConfigError, loadLanesConfig, type MediaKind, type Target } from './lanes';

/** What a target serves, hence which kind of price it needs. */
type PricedKind = 'chat' | 'embeddings' | MediaKind;

/** Whether `price` can price what a target of `kind` serves (an explicit 0 counts). */
function fits(kind: PricedKind, price: ModelPrice): boolean {
  if ('input' in price) return kind === 'chat' || kind === 'embeddings' || kind === 'tts';
  switch (kind) {
    case 'image':
      return price.per_image !== undefined || price.per_request !== undefined;
    case 'tts':
      return price.per_million_characters !== undefined || price.per_request !== undefined;
    case 'music':
    case 'soundfx':
      return price.per_second !== undefined || price.per_request !== undefined;
    default:
      return false;
  }
}

/**
 * Every target of the config without a price of its kind in force at `at`,
 * as `path: provider/model (what is missing)`. A target without a price
 * would cost 0 for ever: cost budgets never stop it and cost billing skips
 * it. A self-hosted model is priced at 0 explicitly.
 */
export function unpricedTargets(config: LanesConfig, at: number): string[] {
  const problems: string[] = [];
  const check = (kind: PricedKind, path: string, t: Target) => {
    const price = priceOf(config.prices, t.provider, t.model, at);
    if (price && fits(kind, price)) return;
    const needs =
      kind === 'chat' || kind === 'embeddings'
        ? 'input and output per million tokens'
        : kind === 'image'
          ? 'per_image'
          : kind === 'tts'
            ? 'per_million_characters or input'
            : 'per_second or per_request';
    problems.push(
      `${path}: ${t.provider}/${t.model} has no ${price ? `${kind} ` : ''}price in prices (needs ${needs}; 0 for a model that costs nothing)`,
    );
  };
  for (const [name, lane] of Object.entries(config.lanes)) {
    for (const [i, t] of lane.targets.entries()) check('chat', `lanes.${name}.targets.${i}`, t);
    for (const [i, t] of (lane.embedding_targets ?? []).entries())
      check('embeddings', `lanes.${name}.embedding_targets.${i}`, t);
  }
  for (const [kind, targets] of Object.entries(config.media) as [MediaKind, Target[]][]) {
    for (const [i, t] of targets.entries()) check(kind, `media.${kind}.${i}`, t);
  }
  return problems;
}

/**
 * A production start refuses a config with an unpriced target, naming each
 * (docs/usage-and-budgets.md, "Nothing unpriced").
 */
export function requirePrices(config: LanesConfig, source: string, at: number): void {
  const problems = unpricedTargets(config, at);
  if (problems.length > 0) throw new LanesConfigError(source, problems);
}

/**
 * The lanes config as the service starts with it (AI_LANES_CONFIG or the
 * built-in default); in production every target must be priced.
 */
export function loadServiceLanes(
  env: Pick<GatewayEnv, 'AI_LANES_CONFIG' | 'AI_ALLOWED_LANES' | 'NODE_ENV'>,
  at: number,
): LanesConfig {
  const lanes = loadLanesConfig(env.AI_LANES_CONFIG, env.AI_ALLOWED_LANES);
  if (env.NODE_ENV === 'production') requirePrices(lanes, env.AI_LANES_CONFIG ?? 'built-in default', at);
  return lanes;
}
