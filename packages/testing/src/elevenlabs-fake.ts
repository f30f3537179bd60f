import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type LoopbackServer, listenLoopback, readBody } from './http-server';
import { scriptedFakeControls } from './openai-fake/controls';
import { createAudio } from './openai-fake/media';
import { createRecorder, type RecordedRequest } from './openai-fake/recorder';
import {
  applyCommonBehaviour,
  type CommonBehaviour,
  createScript,
  type Queued,
  reply,
} from './openai-fake/script';

/** The endpoints of the ElevenLabs fake; also the keys for `setFor`. */
export type ElevenLabsEndpoint = 'music' | 'sound-generation' | 'text-to-speech';

/** Knobs for the ElevenLabs fake: the common ones plus the size of the returned audio. */
export type ElevenLabsBehaviour = CommonBehaviour & { audioFrames?: number };

export type ElevenLabsFakeOptions = {
  /** Accepted `xi-api-key` values; when omitted any non-empty key is accepted. */
  apiKeys?: string[];
  behaviour?: ElevenLabsBehaviour;
};

/** An ElevenLabs-compatible API on loopback: music, sound effects and text-to-speech. */
export type ElevenLabsFake = LoopbackServer & {
  requests: RecordedRequest[];
  set(behaviour: ElevenLabsBehaviour): void;
  setFor(endpoint: ElevenLabsEndpoint, behaviour: ElevenLabsBehaviour): void;
  enqueue(...behaviours: Queued<ElevenLabsBehaviour & { model?: ElevenLabsEndpoint }>[]): void;
  reset(): void;
  waitForRequest(predicate?: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  waitForAbort(predicate?: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
};

const DEFAULT_DETAIL: Record<number, { status: string; message: string }> = {
  400: { status: 'invalid_request', message: 'Invalid request.' },
  401: { status: 'invalid_api_key', message: 'Invalid API key' },
  403: { status: 'missing_permissions', message: 'The API key is missing the required permission.' },
  429: { status: 'too_many_concurrent_requests', message: 'Too many concurrent requests.' },
  500: { status: 'internal_error', message: 'An internal error occurred.' },
  503: { status: 'service_unavailable', message: 'The service is temporarily unavailable.' },
};

/** ElevenLabs' error envelope: `{ detail: { status, message } }`. */
export function elevenLabsErrorBody(status: number, override: CommonBehaviour['error'] = {}) {
  const base = DEFAULT_DETAIL[status] ?? { status: 'error', message: `Upstream error ${status}.` };
  return { detail: { status: override.code ?? base.status, message: override.message ?? base.message } };
}

type FieldRule = { field: string; required?: boolean; min?: number; max?: number };

const RULES: Record<ElevenLabsEndpoint, FieldRule[]> = {
  music: [{ field: 'music_length_ms', min: 3000, max: 600_000 }],
  'sound-generation': [
    { field: 'text', required: true },
    { field: 'duration_seconds', min: 0.5, max: 30 },
    { field: 'prompt_influence', min: 0, max: 1 },
  ],
  'text-to-speech': [{ field: 'text', required: true }],
};

/** FastAPI-style 422 body, the shape ElevenLabs uses for request validation errors. */
function validate(endpoint: ElevenLabsEndpoint, body: Record<string, unknown>) {
  const problems: Array<{ type: string; loc: string[]; msg: string; input: unknown }> = [];
  for (const rule of RULES[endpoint]) {
    const value = body[rule.field];
    if (value === undefined || value === null) {
      if (rule.required)
        problems.push({ type: 'missing', loc: ['body', rule.field], msg: 'Field required', input: body });
      continue;
    }
    if (rule.min === undefined) {
      if (typeof value !== 'string' || value.length === 0) {
        problems.push({
          type: 'string_type',
          loc: ['body', rule.field],
          msg: 'Input should be a non-empty string',
          input: value,
        });
      }
    } else if (typeof value !== 'number' || value < rule.min || value > (rule.max ?? Infinity)) {
      problems.push({
        type: 'value_error',
        loc: ['body', rule.field],
        msg: `Input should be a number between ${rule.min} and ${rule.max}`,
        input: value,
      });
    }
  }
  if (endpoint === 'music' && body.prompt === undefined && body.composition_plan === undefined) {
    problems.push({
      type: 'value_error',
      loc: ['body'],
      msg: 'Either prompt or composition_plan must be provided',
      input: body,
    });
  }
  return problems.length > 0 ? { detail: problems } : undefined;
}

function contentTypeFor(outputFormat: string): string | undefined {
  const codec = outputFormat.split('_')[0];
  const types: Record<string, string> = {
    mp3: 'audio/mpeg',
    pcm: 'audio/pcm',
    ulaw: 'audio/basic',
    opus: 'audio/opus',
    wav: 'audio/wav',
  };
  return codec === undefined ? undefined : types[codec];
}

function route(
  method: string | undefined,
  path: string,
): { endpoint: ElevenLabsEndpoint; voice?: string } | undefined {
  if (method !== 'POST') return undefined;
  if (path === '/v1/music' || path === '/v1/music/stream') return { endpoint: 'music' };
  if (path === '/v1/sound-generation') return { endpoint: 'sound-generation' };
  const tts = /^\/v1\/text-to-speech\/([^/]+)(?:\/stream)?$/.exec(path);
  return tts?.[1] ? { endpoint: 'text-to-speech', voice: decodeURIComponent(tts[1]) } : undefined;
}

/** Starts the fake on 127.0.0.1 with an OS-assigned port. */
export async function startElevenLabsFake(opts: ElevenLabsFakeOptions = {}): Promise<ElevenLabsFake> {
  const recorder = createRecorder();
  const script = createScript<ElevenLabsBehaviour>(opts.behaviour ?? {});

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    let body: Record<string, unknown> | undefined;
    try {
      body = raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : undefined;
    } catch {
      body = undefined;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const target = route(req.method, url.pathname);
    const record = recorder.start(req, res, body, target?.voice ?? (body?.model_id as string | undefined));
    const key = record.headers['xi-api-key'];
    if (!key) {
      return reply(res, record, 401, {
        detail: { status: 'needs_authorization', message: 'Missing xi-api-key header.' },
      });
    }
    if (opts.apiKeys && !opts.apiKeys.includes(key)) return reply(res, record, 401, elevenLabsErrorBody(401));
    if (!target) return reply(res, record, 404, { detail: 'Not Found' });
    if (body === undefined) {
      return reply(res, record, 422, {
        detail: [{ type: 'json_invalid', loc: ['body'], msg: 'JSON decode error', input: {} }],
      });
    }
    const problems = validate(target.endpoint, body);
    if (problems) return reply(res, record, 422, problems);
    const outputFormat = url.searchParams.get('output_format') ?? 'mp3_44100_128';
    const contentType = contentTypeFor(outputFormat);
    if (!contentType) {
      return reply(res, record, 422, {
        detail: [
          {
            type: 'enum',
            loc: ['query', 'output_format'],
            msg: 'Invalid output format',
            input: outputFormat,
          },
        ],
      });
    }
    const behaviour = script.resolve(target.endpoint);
    if (await applyCommonBehaviour(behaviour, res, record, elevenLabsErrorBody)) return;
    const audio =
      contentType === 'audio/mpeg'
        ? createAudio('mp3')
        : createAudio(contentType === 'audio/wav' ? 'wav' : 'pcm');
    const bytes = behaviour.audioFrames ? Buffer.concat(Array(behaviour.audioFrames).fill(audio)) : audio;
    record.status = 200;
    res.writeHead(200, {
      'content-type': contentType,
      'content-length': bytes.length,
      'request-id': randomUUID(),
      ...behaviour.headers,
    });
    res.end(bytes);
  };

  const server = await listenLoopback(handle);
  return scriptedFakeControls(server, recorder, script);
}
