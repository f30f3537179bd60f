import {
  classifyZodError,
  exceedsCodePoints,
  MAX_PROJECT_ID_LENGTH,
  MEDIA_AUDIO_CONTENT_TYPES,
  MPEG_AUDIO_CONTENT_TYPE,
  ZImageRequest,
  ZMusicRequest,
  ZSoundFxRequest,
  ZTtsRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, type Response, Router } from 'express';
import type { z } from 'zod';
import { estimateTokens } from '../usage/estimate';
import type { MediaUse } from '../usage/pricing';
import { answerWith, jsonAnswer, logUpstream, runAccounted } from './accounting';
import { completionUsage, runChatCompletion, toChatCompletionResponse } from './chat';
import { prepareChat } from './chat-request';
import type { MediaKind } from './config/lanes';
import type { FallbackResult } from './fallback';
import {
  composeMusic,
  generateImage,
  generateSoundEffect,
  type MediaCall,
  selectMediaTargets,
  synthesizeSpeech,
} from './media';
import type { AiRuntime } from './runtime';
import { streamChat } from './streaming/native-format';

type MediaBody = { project_id: string; lane?: string | undefined; model?: string | undefined };

/** Audio bytes as the body; the model that answered goes in `X-Model-Used`, as there is no JSON to carry it. */
function sendAudio(res: Response, contentType: string, audio: Buffer, modelUsed: string): void {
  res
    .status(200)
    .setHeader('Content-Type', contentType)
    .setHeader('Content-Length', audio.length)
    .setHeader('X-Model-Used', modelUsed)
    .end(audio);
}

/**
 * Contract validation with the chat endpoint's wording for the fields they
 * share: a body of the right shape whose project_id or lane breaks the chat
 * rule gets the same error as chat would give.
 */
function parseMediaRequest<S extends z.ZodType<MediaBody>>(schema: S, raw: unknown): z.infer<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  if (classifyZodError(result.error) === 'validation_failed' && typeof raw === 'object' && raw !== null) {
    const { project_id: projectId, lane } = raw as Record<string, unknown>;
    if (lane === '') throw new AppError('lane_required');
    if (projectId === '') throw new AppError('project_id_required');
    if (typeof projectId === 'string' && exceedsCodePoints(projectId, MAX_PROJECT_ID_LENGTH)) {
      throw new AppError('project_id_too_long');
    }
  }
  return parseRequestPart(schema, raw);
}

/**
 * One media route: validate with the contract (422 shape, 400 rules), pick
 * the targets, call with fallback, record usage, answer.
 */
function mediaRoute<S extends z.ZodType<MediaBody>>(
  rt: AiRuntime,
  kind: MediaKind,
  schema: S,
  run: (
    body: z.infer<S>,
    call: MediaCall,
    res: Response,
  ) => Promise<{ result: FallbackResult<unknown>; send: () => void }>,
): RequestHandler {
  return async (req, res) => {
    const body = parseMediaRequest(schema, req.body);
    const targets = selectMediaTargets(rt, kind, body);
    const request = {
      projectId: body.project_id,
      endpoint: kind,
      lane: body.lane ?? null,
      targets,
      media: mediaUseOf(kind, body),
    };
    await runAccounted(rt, res, request, async ({ storedKeys, clientSignal }) => {
      const { result, send } = await run(body, { targets, storedKeys, clientSignal }, res);
      logUpstream(res, result);
      return answerWith({ status: 200, target: result.target, usage: null }, send);
    });
  };
}

/** What a media request is priced by (usage/pricing.ts): images and their size, characters, seconds. */
function mediaUseOf(kind: MediaKind, body: Record<string, unknown>): MediaUse {
  const number = (v: unknown) => (typeof v === 'number' ? v : undefined);
  switch (kind) {
    case 'image':
      return { kind, count: number(body.n) ?? 1, size: String(body.size) };
    case 'tts': {
      const text = typeof body.text === 'string' ? body.text : '';
      return { kind, characters: text.length, tokens: estimateTokens(text) };
    }
    default:
      return { kind, seconds: number(body.duration_seconds) };
  }
}

/** `POST /api/v1/ai/image`, `/tts`, `/music`, `/soundfx`. */
export function createMediaRouter(rt: AiRuntime, guards: RequestHandler[]): Router {
  const router = Router();
  router.post(
    '/api/v1/ai/image',
    ...guards,
    mediaRoute(rt, 'image', ZImageRequest, async (body, call, res) => {
      const { images, result } = await generateImage(rt, body, call);
      return { result, send: () => res.json({ images, model_used: result.target.model }) };
    }),
  );
  router.post(
    '/api/v1/ai/tts',
    ...guards,
    mediaRoute(rt, 'tts', ZTtsRequest, async (body, call, res) => {
      const { audio, result } = await synthesizeSpeech(rt, body, call);
      const contentType = MEDIA_AUDIO_CONTENT_TYPES[body.format];
      return { result, send: () => sendAudio(res, contentType, audio, result.target.model) };
    }),
  );
  router.post(
    '/api/v1/ai/music',
    ...guards,
    mediaRoute(rt, 'music', ZMusicRequest, async (body, call, res) => {
      const { audio, result } = await composeMusic(rt, body, call);
      return { result, send: () => sendAudio(res, MPEG_AUDIO_CONTENT_TYPE, audio, result.target.model) };
    }),
  );
  router.post(
    '/api/v1/ai/soundfx',
    ...guards,
    mediaRoute(rt, 'soundfx', ZSoundFxRequest, async (body, call, res) => {
      const { audio, result } = await generateSoundEffect(rt, body, call);
      return { result, send: () => sendAudio(res, MPEG_AUDIO_CONTENT_TYPE, audio, result.target.model) };
    }),
  );
  return router;
}

/**
 * `POST /api/v1/ai/chat/completions` and `/api/v1/ai/chat/stream`. `guards` run first (API
 * key, limits, body parser), so a request that is refused costs no parsing.
 */
export function createChatRouter(rt: AiRuntime, guards: RequestHandler[]): Router {
  const router = Router();

  router.post('/api/v1/ai/chat/completions', ...guards, async (req, res) => {
    const prepared = prepareChat(rt, req.body);
    const request = { projectId: prepared.projectId, endpoint: 'chat', lane: prepared.lane, chat: prepared };
    await runAccounted(rt, res, request, async ({ storedKeys, clientSignal }) => {
      const result = await runChatCompletion(rt, prepared, storedKeys, clientSignal);
      logUpstream(res, result);
      const outcome = { status: 200, ...completionUsage(prepared, result) };
      return jsonAnswer(res, outcome, toChatCompletionResponse(result));
    });
  });

  router.post('/api/v1/ai/chat/stream', ...guards, async (req, res) => {
    const prepared = prepareChat(rt, req.body);
    const request = {
      projectId: prepared.projectId,
      endpoint: 'stream',
      lane: prepared.lane,
      chat: prepared,
    };
    await runAccounted(rt, res, request, ({ storedKeys, ...call }) =>
      streamChat(rt, prepared, storedKeys, res, call),
    );
  });

  return router;
}
