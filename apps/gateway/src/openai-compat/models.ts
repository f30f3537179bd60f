import type { OpenAiModel, OpenAiModelList } from '@platform/contract';
import type { AiRuntime } from '../ai/runtime';

/** A `model` value resolved to a lane and, for `<lane>/<model>`, one of its models. */
export type ResolvedModel = { lane: string; model: string | undefined };

const OWNER = 'gateway';

/**
 * Resolves `free`, `free/llama-3.3-70b-versatile`, or a plain model name as
 * tools send it (`gpt-4o-mini`). Models may contain `/` themselves
 * (`standard/openai/gpt-4o-mini`), so the lane is the allowed lane name that
 * prefixes the value, not the first segment. A value naming no lane is looked
 * up as a model: the first lane in AI_ALLOWED_LANES order whose targets list
 * exactly that model serves it (so the rule never has two answers). Null when
 * nothing matches, or the lane does not offer the model.
 */
export function resolveModel(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes'>,
  value: string,
): ResolvedModel | null {
  for (const lane of rt.allowedLanes) {
    const config = rt.config.lanes[lane];
    if (!config) continue;
    if (value === lane) return { lane, model: undefined };
    if (value.length > lane.length + 1 && value.startsWith(`${lane}/`)) {
      const model = value.slice(lane.length + 1);
      if (config.targets.some((t) => t.model === model)) return { lane, model };
    }
  }
  for (const lane of rt.allowedLanes) {
    if (rt.config.lanes[lane]?.targets.some((t) => t.model === value)) return { lane, model: value };
  }
  return null;
}

/** Most names a 404 lists; the rest are in `GET /v1/models`. */
const MAX_LISTED = 24;

/** The valid `model` values, for the text of a 404 (cut to MAX_LISTED). */
export function validModelsText(rt: Pick<AiRuntime, 'config' | 'allowedLanes'>): string {
  const ids = listModelIds(rt);
  const shown = ids.slice(0, MAX_LISTED).join(', ');
  return ids.length > MAX_LISTED ? `${shown}, … (${ids.length} in all)` : shown;
}

/** Every id `model` accepts: each allowed lane, then `<lane>/<model>` per model it offers. */
export function listModelIds(rt: Pick<AiRuntime, 'config' | 'allowedLanes'>): string[] {
  const ids: string[] = [];
  for (const lane of rt.allowedLanes) {
    const config = rt.config.lanes[lane];
    if (!config) continue;
    ids.push(lane);
    for (const model of new Set(config.targets.map((t) => t.model))) ids.push(`${lane}/${model}`);
  }
  return ids;
}

/** One entry in OpenAI's model format; `created` is unknown for a lane, so 0. */
export function toOpenAiModel(id: string): OpenAiModel {
  return { id, object: 'model', created: 0, owned_by: OWNER };
}

/** `GET /v1/models`. */
export function listModels(rt: Pick<AiRuntime, 'config' | 'allowedLanes'>): OpenAiModelList {
  return { object: 'list', data: listModelIds(rt).map(toOpenAiModel) };
}
