import { z } from 'zod';
import { AppError, ERROR_CODES, toAppError } from '../src';

describe('toAppError', () => {
  it('keeps our own error as it is', () => {
    const err = new AppError('maximum_keys');
    expect(toAppError(err)).toBe(err);
    expect(err.status).toBe(400);
    expect(err.publicMessage).toBe(ERROR_CODES.maximum_keys.error);
  });

  it('maps a zod failure to 422 with field details', () => {
    const parsed = z.object({ name: z.string() }).safeParse({});
    const err = toAppError(parsed.error);
    expect(err.code).toBe('deserialization_error');
    expect(err.details).toEqual([{ path: 'name', message: expect.any(String) }]);
  });

  it.each([
    ['entity.parse.failed', 'deserialization_error'],
    ['entity.too.large', 'payload_too_large'],
    ['charset.unsupported', 'unsupported_media_type'],
  ])('maps the body parser failure %s to %s', (type, code) => {
    expect(toAppError(Object.assign(new Error('x'), { type })).code).toBe(code);
  });

  it('hides anything else behind internal', () => {
    const err = toAppError(new Error('db password=hunter2'));
    expect(err.code).toBe('internal');
    expect(err.publicMessage).toBe('internal error');
  });
});
