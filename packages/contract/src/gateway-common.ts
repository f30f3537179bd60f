import { z } from 'zod';

/** Longest project id, in characters (Unicode code points). */
export const MAX_PROJECT_ID_LENGTH = 128;

/** True when `value` has more than `max` code points; counts without copying the string. */
export function exceedsCodePoints(value: string, max: number): boolean {
  // UTF-16 length is an upper bound of the code point count, so short strings need no walk.
  if (value.length <= max) return false;
  let count = 0;
  for (const _char of value) {
    count += 1;
    if (count > max) return true;
  }
  return false;
}

/**
 * True when Postgres can store the text: no NUL (text columns refuse it) and
 * no unpaired UTF-16 surrogate (it has no UTF-8 form; Postgres refuses its
 * JSON escape). Linear in the length, no regular expression.
 */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && value.isWellFormed();
}

/** The message of a text refused by isStorableText. */
export const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL or unpaired UTF-16 surrogates';

/**
 * A string the gateway writes to Postgres (a project id, a budget subject)
 * or compares with what it wrote: 400 validation failed, naming the field,
 * when Postgres could not store it, instead of a 500 or a stuck ledger.
 */
export function storableText<T extends z.ZodType<string>>(schema: T): T {
  return schema.refine(isStorableText, { message: UNSTORABLE_TEXT_MESSAGE }) as unknown as T;
}

/** The caller's project, used for usage accounting: 1 to 128 characters. */
export const ZProjectId = z
  .string()
  .min(1)
  .refine((v) => !exceedsCodePoints(v, MAX_PROJECT_ID_LENGTH), {
    message: `must be at most ${MAX_PROJECT_ID_LENGTH} characters`,
  })
  .refine(isStorableText, { message: UNSTORABLE_TEXT_MESSAGE })
  .meta({ maxLength: MAX_PROJECT_ID_LENGTH, description: 'Project to account usage to.', example: 'my-app' });

/** A lane name as sent by clients; membership in the configured lane list is checked by the route. */
export const ZLaneName = storableText(z.string().min(1).max(64)).meta({
  description:
    'Lane from the configured allowed-lane list (AI_ALLOWED_LANES); unknown lanes get 400 unknown lane.',
  example: 'free',
});

/** A model id; it must be offered by the lane, otherwise 400. */
export const ZModelName = storableText(z.string().max(256)).meta({
  description: "Model to use; defaults to the lane's default model.",
  example: 'llama-3.3-70b',
});

const ZTokenCount = z.number().int().min(0);

/** The token counts of one completion, named alike in the gateway's and the OpenAI-compatible answers. */
export const TOKEN_COUNT_FIELDS = {
  prompt_tokens: ZTokenCount,
  completion_tokens: ZTokenCount,
  total_tokens: ZTokenCount,
};
