import type { UsageNumbers } from './chat';

export type EmbeddingsRequest = {
  model: string;
  input: unknown;
  dimensions?: number;
  encoding_format?: 'float' | 'base64';
};

/** Default vector length; `dimensions` in the request overrides it. */
const DEFAULT_DIMENSIONS = 8;

/**
 * A deterministic vector for a text: the same text always gives the same
 * vector, so a test can check which input landed where.
 */
export function fakeEmbedding(text: string, dimensions = DEFAULT_DIMENSIONS): number[] {
  let seed = 2166136261;
  for (let i = 0; i < text.length; i += 1) seed = Math.imul(seed ^ text.charCodeAt(i), 16777619) >>> 0;
  return Array.from({ length: dimensions }, (_, i) => (((seed >>> (i % 24)) & 0xff) - 128) / 128);
}

function toBase64(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

/** `POST /v1/embeddings`: one vector per input string, as floats or little-endian float32 base64. */
export function replyEmbeddings(
  request: EmbeddingsRequest,
  usage: UsageNumbers = {},
): { error: string } | { object: 'list'; model: string; data: unknown[]; usage: object } {
  const inputs = typeof request.input === 'string' ? [request.input] : request.input;
  if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((i) => typeof i === 'string'))
    return { error: "Invalid 'input': expected a string or a non-empty array of strings." };
  const dimensions = request.dimensions ?? DEFAULT_DIMENSIONS;
  const prompt = usage.prompt_tokens ?? inputs.reduce((n, t) => n + Math.max(1, Math.ceil(t.length / 4)), 0);
  return {
    object: 'list' as const,
    model: request.model,
    data: inputs.map((text, index) => {
      const vector = fakeEmbedding(text, dimensions);
      return {
        object: 'embedding',
        index,
        embedding: request.encoding_format === 'base64' ? toBase64(vector) : vector,
      };
    }),
    usage: { prompt_tokens: prompt, total_tokens: usage.total_tokens ?? prompt },
  };
}
