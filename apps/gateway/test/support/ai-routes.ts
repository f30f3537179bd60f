import request from 'supertest';
import type { TestCaller } from './ai-harness';
import { writeTempJson } from './ai-harness';
import type { Target } from './endpoints';
import { lanesConfig } from './lanes';

const base = lanesConfig(
  { standard: ['openai:std-1'] },
  {
    image: ['openai:dall-e-3'],
    tts: ['openai:tts-1'],
    music: ['elevenlabs:music_v1'],
    soundfx: ['elevenlabs:sfx_v2'],
  },
);

/** One lane, `standard`, with an embedding target, and every media kind: every AI route answers. */
export const ALL_ROUTES_LANES = {
  ...base,
  lanes: {
    standard: { ...base.lanes.standard, embedding_targets: [{ provider: 'openai', model: 'emb-1' }] },
  },
  prices: { 'openai/std-1': { input: 1, output: 2 }, 'openai/emb-1': { input: 1, output: 0 } },
};

/** The environment of a harness serving ALL_ROUTES_LANES. */
export function allRoutesEnv(): Record<string, string> {
  return {
    AI_LANES_CONFIG: writeTempJson('lanes.json', ALL_ROUTES_LANES),
    AI_ALLOWED_LANES: 'standard',
    AI_RATE_LIMIT_PER_MINUTE: '100000',
  };
}

/** One AI route: its ledger endpoint name and a valid call with the given project id. */
export type AiRouteCall = {
  path: string;
  /** The `endpoint` of its ledger record. */
  endpoint: string;
  /** Where the project id goes: the body's `project_id`, or the /v1 routes' `x-project-id` header. */
  project: 'body' | 'header';
  /** Its ordinary body (with `project_id` for the body routes). */
  body(projectId: string): object;
  send(app: Target, caller: TestCaller, projectId: string, headers?: Record<string, string>): request.Test;
};

const messages = [{ role: 'user', content: 'hi' }];

function post(
  path: string,
  body: object,
  project: 'body' | 'header',
): (app: Target, caller: TestCaller, projectId: string, headers?: Record<string, string>) => request.Test {
  return (app, caller, projectId, headers = {}) => {
    const req = request(app).post(path).set('x-api-key', caller.apiKey).set(headers);
    if (project === 'header') return req.set('x-project-id', projectId).send(body);
    return req.send({ ...body, project_id: projectId });
  };
}

const route = (endpoint: string, path: string, body: object, project: 'body' | 'header' = 'body') => ({
  path,
  endpoint,
  project,
  body: (projectId: string) => (project === 'body' ? { ...body, project_id: projectId } : body),
  send: post(path, body, project),
});

/** Every AI route of the gateway (chat, stream, /v1 chat, messages, responses, embeddings, media). */
export const AI_ROUTES: AiRouteCall[] = [
  route('chat', '/api/v1/ai/chat/completions', { lane: 'standard', messages }),
  route('stream', '/api/v1/ai/chat/stream', { lane: 'standard', messages }),
  route('chat', '/v1/chat/completions', { model: 'standard', messages }, 'header'),
  route('messages', '/v1/messages', { model: 'standard', max_tokens: 50, messages }, 'header'),
  route('responses', '/v1/responses', { model: 'standard', input: 'hi' }, 'header'),
  route('embeddings', '/v1/embeddings', { model: 'standard', input: 'hi' }, 'header'),
  route('image', '/api/v1/ai/image', { prompt: 'a cat' }),
  route('tts', '/api/v1/ai/tts', { text: 'hello' }),
  route('music', '/api/v1/ai/music', { prompt: 'piano' }),
  route('soundfx', '/api/v1/ai/soundfx', { prompt: 'rain' }),
];
