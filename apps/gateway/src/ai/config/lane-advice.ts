import type { LanesConfig } from './lanes';

/**
 * Advice on a valid lanes config, logged at start (never refused): the
 * first-token limit (`first_token_timeout_ms`) suits a lane of non-reasoning
 * models, whose first token comes within seconds, and not one of reasoning
 * models (`reasoning_model: true`), which may think for minutes before it
 * (docs/gateway-ai.md, "First-token limits"). A lane that mixes both has no
 * right value.
 */
export function laneAdvice(config: Pick<LanesConfig, 'lanes'>): string[] {
  const advice: string[] = [];
  for (const [name, lane] of Object.entries(config.lanes)) {
    const reasoning = lane.targets.filter((t) => t.reasoning_model === true).map((t) => t.model);
    if (reasoning.length === 0) continue;
    if (reasoning.length < lane.targets.length) {
      advice.push(
        `lanes.${name} mixes reasoning models (${reasoning.join(', ')}) with non-reasoning ones: ` +
          'no first_token_timeout_ms fits both; give each kind a lane of its own',
      );
    } else if (lane.first_token_timeout_ms !== undefined) {
      advice.push(
        `lanes.${name} holds reasoning models only but sets first_token_timeout_ms ` +
          `(${lane.first_token_timeout_ms} ms): a model still thinking is failed over`,
      );
    }
  }
  return advice;
}
