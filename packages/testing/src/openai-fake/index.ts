import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type LoopbackServer, listenLoopback, readBody } from '../http-server';
import {
  type ChatRequest,
  endsWithPrefill,
  type OpenAIBehaviour,
  PREFILL_REFUSAL_MESSAGE,
  replyChat,
  streamChat,
} from './chat';
import { scriptedFakeControls } from './controls';
import { type EmbeddingsRequest, replyEmbeddings } from './embeddings';
import { createAudio, SPEECH_CONTENT_TYPES, TINY_PNG_BASE64 } from './media';
import { createRecorder, type RecordedRequest } from './recorder';
import { replyResponses, streamResponses } from './responses';
import {
  applyCommonBehaviour,
  type CommonBehaviour,
  createScript,
  type Queued,
  type Responder,
  reply,
} from './script';

export type { OpenAIBehaviour, UsageNumbers } from './chat';
export { fakeEmbedding } from './embeddings';
export { downFor, FAULTS } from './faults';
export { createAudio, createSilentMp3, createSilentWav, TINY_PNG_BASE64 } from './media';
export type { RecordedRequest } from './recorder';
export type { CommonBehaviour, Queued, Responder } from './script';

/** Options of `startOpenAIFake`. */
export type OpenAIFakeOptions = {
  /** Accepted API keys; when omitted any Bearer token is accepted. */
  apiKeys?: string[];
  /** Known models; others get OpenAI's 404 model_not_found. When omitted every model exists. */
  models?: string[];
  /** Initial fake-wide behaviour. */
  behaviour?: OpenAIBehaviour;
};

/** An OpenAI-compatible provider on loopback: chat and Responses (plain and SSE), embeddings, images, speech. */
export type OpenAIFake = LoopbackServer & {
  /** `${url}/v1`, the value for the SDK's `baseURL`. */
  baseURL: string;
  requests: RecordedRequest[];
  set(behaviour: OpenAIBehaviour): void;
  setFor(model: string, behaviour: OpenAIBehaviour): void;
  enqueue(...behaviours: Queued<OpenAIBehaviour>[]): void;
  reset(): void;
  /** Decides each request's behaviour from its body (see Responder). */
  respond(responder: Responder<OpenAIBehaviour> | undefined): void;
  waitForRequest(predicate?: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  /** Resolves with the first request (past or future) whose client hung up before the response ended. */
  waitForAbort(predicate?: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
};

const DEFAULT_ERRORS: Record<number, { message: string; type: string; code: string | null }> = {
  400: { message: 'Invalid request.', type: 'invalid_request_error', code: null },
  401: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' },
  403: {
    message: 'You are not allowed to sample from this model.',
    type: 'invalid_request_error',
    code: null,
  },
  404: {
    message: 'The model does not exist or you do not have access to it.',
    type: 'invalid_request_error',
    code: 'model_not_found',
  },
  429: { message: 'Rate limit reached for requests.', type: 'requests', code: 'rate_limit_exceeded' },
  500: {
    message: 'The server had an error while processing your request. Sorry about that!',
    type: 'server_error',
    code: null,
  },
  503: {
    message: 'The engine is currently overloaded, please try again later.',
    type: 'server_error',
    code: null,
  },
};

/** OpenAI's error envelope: `{ error: { message, type, param, code } }`. */
export function openAIErrorBody(status: number, override: CommonBehaviour['error'] = {}) {
  const base = DEFAULT_ERRORS[status] ?? {
    message: `Upstream error ${status}.`,
    type: 'api_error',
    code: null,
  };
  return { error: { ...base, param: null, ...override } };
}

function maskKey(key: string): string {
  return key.length > 8 ? `${key.slice(0, 3)}*****${key.slice(-4)}` : '*****';
}

/** Starts the fake on 127.0.0.1 with an OS-assigned port. */
export async function startOpenAIFake(opts: OpenAIFakeOptions = {}): Promise<OpenAIFake> {
  const recorder = createRecorder();
  const script = createScript<OpenAIBehaviour>(opts.behaviour ?? {});
  let baseUrl = '';

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    let body: Record<string, unknown> | undefined;
    let parseFailed = false;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        parseFailed = true;
      }
    }
    const model = typeof body?.model === 'string' ? body.model : undefined;
    const record = recorder.start(req, res, body, model);
    record.rawBody = raw.toString('utf8');
    const path = record.path;
    const fail = (status: number, message: string, code: string | null = null, param: string | null = null) =>
      reply(
        res,
        record,
        status,
        openAIErrorBody(status, { message, code, type: 'invalid_request_error', param }),
      );

    if (req.method === 'GET' && path === '/files/image.png') {
      record.status = 200;
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.from(TINY_PNG_BASE64, 'base64'));
      return;
    }
    const token = /^Bearer (.+)$/.exec(record.headers.authorization ?? '')?.[1];
    if (!token) {
      return fail(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
      );
    }
    if (opts.apiKeys && !opts.apiKeys.includes(token)) {
      return fail(401, `Incorrect API key provided: ${maskKey(token)}.`, 'invalid_api_key');
    }
    if (req.method === 'GET' && path === '/v1/models') {
      const ids = opts.models ?? ['gpt-fake'];
      return reply(res, record, 200, {
        object: 'list',
        data: ids.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })),
      });
    }
    const endpoint = `${req.method} ${path}`;
    if (
      ![
        'POST /v1/chat/completions',
        'POST /v1/responses',
        'POST /v1/images/generations',
        'POST /v1/audio/speech',
        'POST /v1/embeddings',
      ].includes(endpoint)
    ) {
      return fail(404, `Invalid URL (${endpoint})`);
    }
    if (parseFailed || body === undefined) {
      return fail(
        400,
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)",
      );
    }
    const required = endpoint.endsWith('chat/completions')
      ? ['model', 'messages']
      : endpoint.endsWith('responses')
        ? ['model']
        : endpoint.endsWith('speech')
          ? ['model', 'input', 'voice']
          : endpoint.endsWith('embeddings')
            ? ['model', 'input']
            : ['prompt'];
    const missing = required.find((field) => body[field] === undefined);
    if (missing)
      return fail(400, `Missing required parameter: '${missing}'.`, 'missing_required_parameter', missing);
    if (model !== undefined && opts.models && !opts.models.includes(model)) {
      return fail(
        404,
        `The model \`${model}\` does not exist or you do not have access to it.`,
        'model_not_found',
      );
    }

    const behaviour = script.resolve(model, body);
    if (await applyCommonBehaviour(behaviour, res, record, openAIErrorBody)) return;
    const headers = { 'x-request-id': `req_${randomUUID().replaceAll('-', '')}`, ...behaviour.headers };

    if (endpoint.endsWith('chat/completions')) {
      const chat = body as ChatRequest;
      if (!Array.isArray(chat.messages) || chat.messages.length === 0) {
        return fail(
          400,
          "Invalid 'messages': empty array. Expected an array with minimum length 1.",
          'empty_array',
          'messages',
        );
      }
      if (behaviour.refusePrefill && endsWithPrefill(chat))
        return fail(400, PREFILL_REFUSAL_MESSAGE, 'prefill_rejected', 'messages');
      if (chat.stream === true) return streamChat(res, record, chat, behaviour, headers);
      return replyChat(res, record, chat, behaviour, headers);
    }
    if (endpoint.endsWith('/responses')) {
      if (body.stream === true) return streamResponses(res, record, body, behaviour, headers);
      return replyResponses(res, record, body, behaviour, headers);
    }
    if (endpoint.endsWith('embeddings')) {
      const answer = replyEmbeddings(body as EmbeddingsRequest, behaviour.usage);
      if ('error' in answer) return fail(400, answer.error, 'invalid_value', 'input');
      return reply(res, record, 200, answer, headers);
    }
    if (endpoint.endsWith('images/generations')) {
      const n = typeof body.n === 'number' ? body.n : 1;
      const asUrl = body.response_format === 'url';
      const image = asUrl ? { url: `${baseUrl}/files/image.png` } : { b64_json: TINY_PNG_BASE64 };
      return reply(
        res,
        record,
        200,
        {
          created: Math.floor(Date.now() / 1000),
          data: Array.from({ length: n }, () => ({ ...image, revised_prompt: body.prompt })),
        },
        headers,
      );
    }
    const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
    const contentType = SPEECH_CONTENT_TYPES[format];
    if (!contentType) {
      return fail(
        400,
        `Invalid value for 'response_format': '${format}'.`,
        'invalid_value',
        'response_format',
      );
    }
    const audio = createAudio(format);
    record.status = 200;
    res.writeHead(200, { 'content-type': contentType, 'content-length': audio.length, ...headers });
    res.end(audio);
  };

  const server = await listenLoopback(handle);
  baseUrl = server.url;
  return { ...scriptedFakeControls(server, recorder, script), baseURL: `${server.url}/v1` };
}
