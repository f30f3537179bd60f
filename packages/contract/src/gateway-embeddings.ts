import { z } from 'zod';

/** `POST /v1/embeddings`: one string or up to 2048 strings, OpenAI's format; other fields are passed on (field policy). */
export const ZEmbeddingsRequest = z
  .looseObject({
    model: z.string().min(1).max(512).meta({ example: 'standard/text-embedding-3-small' }),
    input: z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(2048)]),
    encoding_format: z.enum(['float', 'base64']).optional(),
    dimensions: z.number().int().positive().max(65536).optional(),
    user: z.string().max(256).optional(),
  })
  .meta({ id: 'EmbeddingsRequest' });
export type EmbeddingsRequest = z.infer<typeof ZEmbeddingsRequest>;

export const ZEmbeddingsResponse = z
  .object({
    object: z.literal('list'),
    model: z.string(),
    data: z.array(
      z.object({
        object: z.literal('embedding'),
        index: z.number().int(),
        embedding: z.union([z.array(z.number()), z.string()]),
      }),
    ),
    usage: z.object({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }),
  })
  .meta({ id: 'EmbeddingsResponse' });
export type EmbeddingsResponse = z.infer<typeof ZEmbeddingsResponse>;
