import { classifyZodError } from '@platform/contract';
import { AppError, zodDetails } from '@platform/errors';
import type { z } from 'zod';

/**
 * Parses one part of a request (body, params, query, a header) with its
 * contract schema. A missing field or a wrong type is 422 `deserialization
 * error`; a present value that breaks a rule (URL, e-mail, range) is 400
 * `validation failed`. `details` names every field.
 */
export function parseRequestPart<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new AppError(classifyZodError(result.error), {
    details: zodDetails(result.error),
    cause: result.error,
  });
}
