import { sendJson } from '@platform/service-kit';
import type { Request, Response } from 'express';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { answerWith, logUpstream, runAccounted } from '../ai/accounting';
import { completionUsage, runChatCompletion } from '../ai/chat';
import type { PreparedChat } from '../ai/chat-request';
import type { Target } from '../ai/config/lanes';
import { announceDroppedParams } from '../ai/field-policy';
import type { AiRuntime } from '../ai/runtime';
import { relayChatStream, type StreamFormat } from '../ai/streaming/relay';

/** A header's value when sent once, else undefined. */
export function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** What differs between the /v1 chat routes (chat completions, responses, messages): names and formats. */
export type ChatRoute<Who> = {
  /** The ledger's endpoint of a plain answer and of a stream. */
  endpoint: string;
  streamEndpoint: string;
  /** What names the answer (its id, from the request id). */
  identity(requestId: string): Who;
  /** The stream's wire format. */
  streamFormat(who: Who): StreamFormat;
  /** The answering target's completion as this route's JSON answer. */
  answer(completion: ChatCompletion, target: Target, who: Who): unknown;
  /** Awaited with the JSON answer before it is sent (a stored response is kept first). */
  beforeSend?(answer: unknown): Promise<void>;
};

/**
 * The frame of the /v1 chat routes after validation: the request accounted
 * (runAccounted), a stream relayed in the route's format, otherwise the
 * completion run through the lane's targets and sent as the route's JSON
 * once its usage is recorded.
 */
export async function runChatRoute<Who>(
  rt: AiRuntime,
  res: Response,
  prepared: { chat: PreparedChat; stream: boolean },
  route: ChatRoute<Who>,
): Promise<void> {
  const { chat } = prepared;
  const request = {
    projectId: chat.projectId,
    endpoint: prepared.stream ? route.streamEndpoint : route.endpoint,
    lane: chat.lane,
    chat,
  };
  await runAccounted(rt, res, request, async ({ storedKeys, clientSignal, requestId, reserveMore }) => {
    const who = route.identity(requestId);
    if (prepared.stream) {
      const format = route.streamFormat(who);
      return relayChatStream(rt, chat, storedKeys, res, { clientSignal, format, reserveMore });
    }
    const result = await runChatCompletion(rt, chat, storedKeys, clientSignal);
    const response = route.answer(result.value, result.target, who);
    logUpstream(res, result);
    announceDroppedParams(rt, res, chat, result.target);
    const outcome = { status: 200, ...completionUsage(chat, result) };
    return answerWith(outcome, async () => {
      if (route.beforeSend) await route.beforeSend(response);
      sendJson(res, response);
    });
  });
}
