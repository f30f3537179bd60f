import type { z } from 'zod';

/** The two error codes a schema failure maps to. */
export type ValidationErrorCode = 'deserialization_error' | 'validation_failed';

/** Issue kinds that mean "the shape is wrong", as opposed to "a value breaks a rule". */
const SHAPE_ISSUES = new Set<string>(['invalid_type', 'invalid_union', 'invalid_key', 'unrecognized_keys']);

/**
 * Classifies a zod failure the way both services answer it: a missing field or
 * a wrong type is `deserialization_error` (422), a present value that breaks a
 * rule (length, range, format, enum) is `validation_failed` (400). When both
 * kinds occur the shape problem wins, since the rules were checked on a body
 * that is not what the client meant to send.
 */
export function classifyZodError(error: z.ZodError): ValidationErrorCode {
  return error.issues.some(isShapeIssue) ? 'deserialization_error' : 'validation_failed';
}

function isShapeIssue(issue: z.core.$ZodIssue): boolean {
  if (!SHAPE_ISSUES.has(issue.code)) return false;
  // zod 4 reports a fractional number for an integer field as invalid_type with a
  // `format`: the JSON type is right, the value breaks a rule (400, not 422).
  return !(issue.code === 'invalid_type' && 'format' in issue && issue.expected === 'int');
}
