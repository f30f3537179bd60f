import { AppError } from '@platform/errors';
import { anthropicErrorType, anthropicStatus, toAnthropicErrorBody } from './errors';

// Our errors in Anthropic's envelope, which its SDKs and Claude Code branch on.

describe('anthropicErrorType', () => {
  it('401 is authentication_error', () => expect(anthropicErrorType(401)).toBe('authentication_error'));
  it('403 is permission_error', () => expect(anthropicErrorType(403)).toBe('permission_error'));
  it('404 is not_found_error', () => expect(anthropicErrorType(404)).toBe('not_found_error'));
  it('413 is request_too_large', () => expect(anthropicErrorType(413)).toBe('request_too_large'));
  it('429 is rate_limit_error', () => expect(anthropicErrorType(429)).toBe('rate_limit_error'));
  it('503 and 529 are overloaded_error', () => {
    expect(anthropicErrorType(503)).toBe('overloaded_error');
    expect(anthropicErrorType(529)).toBe('overloaded_error');
  });
  it('other 5xx are api_error', () => {
    expect(anthropicErrorType(500)).toBe('api_error');
    expect(anthropicErrorType(502)).toBe('api_error');
  });
  it('other 4xx are invalid_request_error', () => {
    expect(anthropicErrorType(400)).toBe('invalid_request_error');
    expect(anthropicErrorType(409)).toBe('invalid_request_error');
  });
});

describe('toAnthropicErrorBody', () => {
  it('a validation error names its first broken field', () => {
    const err = new AppError('validation_failed', {
      details: [
        { path: 'max_tokens', message: 'required' },
        { path: 'model', message: 'required' },
      ],
    });
    expect(toAnthropicErrorBody(err, 'req-1')).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'validation failed: max_tokens: required' },
      request_id: 'req-1',
    });
  });

  it('a deserialization error also names its field', () => {
    const err = new AppError('deserialization_error', {
      details: [{ path: 'messages', message: 'expected array' }],
    });
    expect(toAnthropicErrorBody(err, 'r').error.message).toBe(
      'deserialization error: messages: expected array',
    );
  });

  it('other errors carry only the public message, never their details', () => {
    const err = new AppError('rate_limited', { details: [{ path: 'key', message: 'secret detail' }] });
    expect(toAnthropicErrorBody(err, 'r').error).toEqual({
      type: 'rate_limit_error',
      message: 'rate_limited',
    });
  });
});

describe('anthropicStatus', () => {
  it('our 422 is Anthropic 400; other statuses stay', () => {
    expect(anthropicStatus(new AppError('deserialization_error'))).toBe(400);
    expect(anthropicStatus(new AppError('invalid_api_key'))).toBe(401);
    expect(anthropicStatus(new AppError('service_unavailable'))).toBe(503);
  });
});
