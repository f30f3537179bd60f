import { AppError } from '@platform/errors';
import { modelNotFound, toOpenAiErrorBody, unsupportedParameter } from './errors';
import { anthropicErrorType, anthropicStatus, toAnthropicErrorBody } from './messages/errors';

// Our errors in the two vendors' envelopes: the status, type and code their SDKs branch on.

describe("OpenAI's error envelope", () => {
  it('uses OpenAI names for the codes it has its own for', () => {
    const body = toOpenAiErrorBody(new AppError('rate_limited'));
    expect(body.error).toEqual(
      expect.objectContaining({ type: 'requests', code: 'rate_limit_exceeded', param: null }),
    );
    expect(toOpenAiErrorBody(new AppError('upstream_context_length')).error.code).toBe(
      'context_length_exceeded',
    );
  });

  it('keeps our code otherwise, with a type by status', () => {
    expect(toOpenAiErrorBody(new AppError('invalid_api_key')).error).toEqual(
      expect.objectContaining({ type: 'invalid_request_error', code: 'invalid_api_key' }),
    );
    expect(toOpenAiErrorBody(new AppError('upstream_error')).error.type).toBe('server_error');
  });

  it('a validation error names its first field in the message and in param', () => {
    const err = new AppError('validation_failed', { details: [{ path: 'messages', message: 'Required' }] });
    const body = toOpenAiErrorBody(err);
    expect(body.error.param).toBe('messages');
    expect(body.error.message).toBe(`${err.publicMessage}: messages: Required`);
  });

  it('a model that does not exist is named, cut when long, with the valid ones after it', () => {
    const err = modelNotFound('x'.repeat(200), 'free, paid');
    expect(err.code).toBe('model_not_found');
    expect(err.publicMessage).toContain(`${'x'.repeat(128)}...`);
    expect(err.publicMessage).toContain('Valid models: free, paid');
  });

  it('an unsupported parameter is named as the param', () => {
    const body = toOpenAiErrorBody(unsupportedParameter('stream', 'not with mcp'));
    expect(body.error.param).toBe('stream');
    expect(body.error.message).toBe('not with mcp');
  });
});

describe("Anthropic's error envelope", () => {
  it.each([
    [401, 'authentication_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [503, 'overloaded_error'],
    [502, 'api_error'],
    [400, 'invalid_request_error'],
  ])('status %i is %s', (status, type) => {
    expect(anthropicErrorType(status)).toBe(type);
  });

  it('carries the request id and, for a bad body, the first field', () => {
    const err = new AppError('validation_failed', { details: [{ path: 'max_tokens', message: 'Required' }] });
    expect(toAnthropicErrorBody(err, 'req-1')).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: `${err.publicMessage}: max_tokens: Required` },
      request_id: 'req-1',
    });
  });

  it("a body of the wrong shape is Anthropic's 400, not our 422", () => {
    expect(new AppError('deserialization_error').status).toBe(422);
    expect(anthropicStatus(new AppError('deserialization_error'))).toBe(400);
    expect(anthropicStatus(new AppError('rate_limited'))).toBe(429);
  });
});
