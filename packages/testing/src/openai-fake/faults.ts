import type { OpenAIBehaviour } from './chat';

/**
 * The misbehaviours of real providers that a gateway must survive, as
 * behaviours of the OpenAI fake (`set`, `setFor`, `enqueue`). Each names one
 * fault of the fault-injection suite of issue 27; tests combine them with a
 * healthy second target to check the answer is rescued, or alone to check
 * the error is clean, quick and bounded.
 */
export const FAULTS = {
  /** 429 with a short Retry-After: worth waiting for on the same target. */
  rateLimitedBriefly: { status: 429, retryAfter: 1 },
  /** 429 that says to come back much later: fail over at once. */
  rateLimitedLong: { status: 429, retryAfter: 120 },
  /** 429 without Retry-After. */
  rateLimitedNoHint: { status: 429, retryAfter: null },
  serverError: { status: 500 },
  overloaded: { status: 503 },
  /** The connection is reset before any byte of the answer. */
  reset: { reset: true },
  /** Accepts the request and never answers. */
  silence: { hang: true },
  /** Headers and role chunk at once, then nothing for a long while before the first content. */
  slowFirstToken: { firstTokenDelayMs: 30_000 },
  /** Two content chunks, then the connection is cut (no finish reason, no [DONE]). */
  cutAfterTwoChunks: { failAfterChunks: 2 },
  /** Two content chunks, then silence with the connection open. */
  stallAfterTwoChunks: { stallAfterChunks: 2 },
  /** One unparseable event in the middle of the stream. */
  garbledOnce: { garbled: { beforeChunk: 2, count: 1 } },
  /** Two unparseable events in a row in the middle of the stream. */
  garbledTwice: { garbled: { beforeChunk: 2, count: 2 } },
  /** A complete answer whose stream ends without `data: [DONE]`. */
  missingDone: { omitDone: true },
  /**
   * A model that refuses a prefilled continuation (400 `prefill_rejected`),
   * answers one by instruction, restating the last word it was shown ("quick ").
   */
  refusesPrefill: { refusePrefill: true, continuesByInstruction: { restateChars: 6 } },
  /** OpenAI's answer to a prompt longer than the model's context window. */
  contextLength: {
    status: 400,
    error: {
      message:
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      param: 'messages',
    },
  },
  /** OpenAI's content-policy refusal. */
  contentPolicy: {
    status: 400,
    error: {
      message: 'Your request was rejected as a result of our safety system. Quoting the prompt: secret stuff',
      type: 'invalid_request_error',
      code: 'content_policy_violation',
      param: null,
    },
  },
} as const satisfies Record<string, OpenAIBehaviour>;

/** A provider that answers `downStatus` (503, 0 = reset) for `ms` from now, then behaves as `then`. */
export function downFor(ms: number, then: OpenAIBehaviour = {}, downStatus = 503): OpenAIBehaviour {
  return { ...then, downUntil: Date.now() + ms, downStatus };
}
