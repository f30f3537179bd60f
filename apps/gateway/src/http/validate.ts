import { classifyZodError } from '@platform/contract';
import { AppError, zodDetails } from '@platform/errors';
import type { z } from 'zod';

/**
 * Parses a request body with its contract schema: a missing field or wrong
 * type -> 422 `deserialization error`, a value breaking a rule -> 400
 * `validation failed`, both with field details.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body ?? undefined);
  if (result.success) return result.data;
  throw new AppError(classifyZodError(result.error), {
    details: zodDetails(result.error),
    cause: result.error,
  });
}
