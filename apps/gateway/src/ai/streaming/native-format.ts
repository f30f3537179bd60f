import { STREAM_EVENTS } from '@platform/contract';
import { ERROR_CODES } from '@platform/errors';
import type { Response } from 'express';
import type { AccountedCall } from '../accounting';
import type { PreparedChat } from '../chat-request';
import type { AiRuntime, StoredKeys } from '../runtime';
import { relayChatStream, type StreamAnswer, type StreamFormat } from './relay';

/**
 * The native events of `POST /api/v1/ai/chat/stream`: `chunk`, then `done` or
 * `error` (with `cause` when a broken stream could not be continued).
 */
export function nativeStreamFormat(requestId: string): StreamFormat {
  return {
    chunk(sse, chunk) {
      // Writes every choice's content; if the socket pushes back, the caller waits once.
      let wait: Promise<void> | undefined;
      for (const choice of chunk.choices) {
        const content = choice.delta?.content;
        if (content) wait = sse.send(STREAM_EVENTS.chunk, { content }) ?? wait;
      }
      return wait;
    },
    async done(sse, end) {
      await sse.send(STREAM_EVENTS.done, {
        model_used: end.target.model,
        finish_reason: end.finishReason,
        usage: end.usage,
      });
    },
    async error(sse, code, cause) {
      await sse.send(STREAM_EVENTS.error, {
        error: ERROR_CODES[code].error,
        request_id: requestId,
        ...(cause ? { cause } : {}),
      });
    },
  };
}

/** POST /api/v1/ai/chat/stream after validation, in the native event format. */
export function streamChat(
  rt: AiRuntime,
  prepared: PreparedChat,
  storedKeys: StoredKeys,
  res: Response,
  opts: Pick<AccountedCall, 'clientSignal' | 'requestId' | 'reserveMore'>,
): Promise<StreamAnswer> {
  return relayChatStream(rt, prepared, storedKeys, res, {
    clientSignal: opts.clientSignal,
    format: nativeStreamFormat(opts.requestId),
    reserveMore: opts.reserveMore,
  });
}
