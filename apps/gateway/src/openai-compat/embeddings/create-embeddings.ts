import { type EmbeddingsRequest, type EmbeddingsResponse, ZEmbeddingsRequest } from '@platform/contract';
import { parseRequestPart } from '@platform/service-kit';
import type { CreateEmbeddingResponse } from 'openai/resources/embeddings';
import type { Target } from '../../ai/config/lanes';
import type { FallbackResult } from '../../ai/fallback';
import { runTargets } from '../../ai/run-targets';
import type { AiRuntime, StoredKeys } from '../../ai/runtime';
import { estimateTexts } from '../../usage/estimate';
import { modelNotFound } from '../errors';

/** An embeddings request resolved to a lane's embedding targets. */
export type PreparedEmbeddings = { lane: string; targets: readonly Target[]; request: EmbeddingsRequest };

/**
 * `model` is a lane (its embedding targets in order) or `<lane>/<model>` (the
 * targets serving that embedding model). A lane without `embedding_targets`,
 * or a model it does not list, is OpenAI's 404 model_not_found.
 */
export function prepareEmbeddings(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes'>,
  body: unknown,
): PreparedEmbeddings {
  const request = parseRequestPart(ZEmbeddingsRequest, body);
  for (const lane of rt.allowedLanes) {
    const targets = rt.config.lanes[lane]?.embedding_targets;
    if (!targets) continue;
    if (request.model === lane) return { lane, targets, request };
    if (request.model.startsWith(`${lane}/`)) {
      const model = request.model.slice(lane.length + 1);
      const matching = targets.filter((t) => t.model === model);
      if (matching.length > 0) return { lane, targets: matching, request };
    }
  }
  throw modelNotFound(request.model);
}

/** Tokens an embeddings request reserves: its input's. */
export function estimateEmbeddingInput(input: string | readonly string[]): number {
  return estimateTexts(typeof input === 'string' ? [input] : input);
}

/**
 * `POST /v1/embeddings` through the lane's embedding targets with the same
 * fallback, breaker and deadline as chat; the vectors as the provider sent
 * them (floats, or base64 when asked), the model as `<lane>/<model>`.
 */
export async function createEmbeddings(
  rt: AiRuntime,
  prepared: PreparedEmbeddings,
  storedKeys: StoredKeys,
  clientSignal: AbortSignal,
): Promise<{ response: EmbeddingsResponse; result: FallbackResult<CreateEmbeddingResponse> }> {
  const result = await runTargets(rt, {
    endpoint: 'embeddings',
    targets: prepared.targets,
    storedKeys,
    clientSignal,
    attempt: ({ target, credential, signal }) =>
      rt.providers
        .client(credential)
        .embeddings.create({ ...prepared.request, model: target.model }, { signal }),
  });
  const value = result.value;
  const prompt = value.usage?.prompt_tokens ?? 0;
  return {
    response: {
      object: 'list',
      model: `${prepared.lane}/${result.target.model}`,
      data: value.data.map((d) => ({ object: 'embedding', index: d.index, embedding: d.embedding })),
      usage: { prompt_tokens: prompt, total_tokens: value.usage?.total_tokens ?? prompt },
    },
    result,
  };
}
