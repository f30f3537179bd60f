/// <reference types="jest" />
import type { Response } from 'supertest';

/** A request id as both services issue them. */
export const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Asserts a rejected input: `status` (400 unless given) with the JSON error
 * contract `{error, request_id}` (`error` is 'validation failed' unless given)
 * and, when `path` is given, a `details` entry for that field.
 */
export function expectRejected(
  res: Response,
  {
    path,
    status = 400,
    error = 'validation failed',
  }: { path?: string; status?: number; error?: string } = {},
): void {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({
    error,
    request_id: expect.stringMatching(REQUEST_ID),
    ...(path === undefined ? {} : { details: [expect.objectContaining({ path })] }),
  });
}

/**
 * Asserts the answer to a path with malformed percent-encoding: exactly the
 * 400 below, and no error-level line logged for its request (`logLines`: the
 * app's JSON log lines).
 */
export function expectMalformedPathRejected(res: Response, logLines: string[]): void {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({
    error: 'validation failed',
    code: 'validation_failed',
    request_id: expect.stringMatching(REQUEST_ID),
    details: [{ path: '(path)', message: 'malformed percent-encoding' }],
  });
  const lines = logLines.map((l) => JSON.parse(l) as { level: string; request_id?: string });
  expect(lines.filter((l) => l.request_id === res.body.request_id && l.level === 'error')).toEqual([]);
}
