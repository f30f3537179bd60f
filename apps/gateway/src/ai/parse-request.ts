import { classifyZodError } from '@platform/contract';
import { AppError, zodDetails } from '@platform/errors';
import type { z } from 'zod';

/** Parses with a contract schema; a wrong shape is 422, a broken rule 400 with details. */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new AppError(classifyZodError(result.error), { details: zodDetails(result.error) });
}
