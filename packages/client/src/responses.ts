import { ResponseValidationError } from './errors';
import { type ClientOptions, checkApiKey, normalizeBaseUrl } from './options';
import { resolveRetryPolicy } from './retry-policy';
import { sleep } from './sleep';
import type { AttemptContext, Transport } from './transport';

/** The part of a zod schema the clients use, so any contract schema fits. */
export type ResponseSchema<T> = {
  safeParse(
    value: unknown,
  ): { success: true; data: T } | { success: false; error: { issues: ZodIssueLike[] } };
};
type ZodIssueLike = { path: PropertyKey[]; message: string };

/** Builds the transport shared by a client's methods from the public options. */
export function createTransport(
  options: ClientOptions,
  authHeader: string,
  defaultTimeoutMs: number,
): Transport {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw new TypeError('no fetch available; pass options.fetch');
  return {
    baseUrl: normalizeBaseUrl(options.baseUrl),
    headers: { [authHeader]: checkApiKey(options.apiKey) },
    fetch: fetchImpl,
    retry: resolveRetryPolicy(options.retry),
    timeoutMs: options.timeoutMs ?? defaultTimeoutMs,
    sleep: options.sleep ?? sleep,
    now: options.now ?? Date.now,
    onRetry: options.onRetry,
  };
}

/** Reads a JSON body and checks it against the contract. */
export function readJson<T>(schema: ResponseSchema<T>) {
  return async (response: Response, context: AttemptContext): Promise<T> => {
    const text = await response.text();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw validationError(response, context, [{ path: '(root)', message: 'body is not JSON' }]);
    }
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    const issues = result.error.issues.map((issue) => ({
      path: issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.'),
      message: issue.message,
    }));
    throw validationError(response, context, issues);
  };
}

/** Binary media answer: the bytes and their Content-Type. */
export type BinaryResponse = { data: Uint8Array; contentType: string };

export async function readBytes(response: Response, context: AttemptContext): Promise<BinaryResponse> {
  const contentType = response.headers.get('content-type') ?? '';
  if (contentType === '' || contentType.startsWith('application/json')) {
    await response.body?.cancel();
    throw validationError(response, context, [
      { path: '(root)', message: `expected binary media, got ${contentType || 'no content type'}` },
    ]);
  }
  return { data: new Uint8Array(await response.arrayBuffer()), contentType };
}

/** For 204 answers: drains the (empty) body so the connection can be reused. */
export async function readNothing(response: Response): Promise<void> {
  await response.arrayBuffer();
}

function validationError(
  response: Response,
  context: AttemptContext,
  issues: { path: string; message: string }[],
): ResponseValidationError {
  return new ResponseValidationError({
    status: response.status,
    issues,
    requestId: context.requestId,
    attempts: context.attempts,
    history: [
      ...context.history,
      {
        attempt: context.attempts,
        requestId: context.requestId,
        status: response.status,
        error: 'invalid response',
      },
    ],
  });
}
