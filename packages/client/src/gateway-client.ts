import {
  type ChatCompletionResponse,
  type HealthResponse,
  type ImageResponse,
  type ListProviderKeysResponse,
  type MeResponse,
  type StoredProviderKey,
  type UsageResponse,
  ZChatCompletionResponse,
  ZHealthResponse,
  ZImageResponse,
  ZListProviderKeysResponse,
  ZMeResponse,
  ZStoredProviderKey,
  ZUsageResponse,
} from '@platform/contract';
import { type ChatStream, streamChat } from './chat-stream';
import type {
  ChatCompletionInput,
  ImageInput,
  MusicInput,
  SoundFxInput,
  StoreProviderKeyInput,
  TtsInput,
  UsageQueryInput,
} from './inputs';
import type { ClientOptions } from './options';
import {
  type BinaryResponse,
  createTransport,
  type ResponseSchema,
  readBytes,
  readJson,
  readNothing,
} from './responses';
import { type CallOptions, executeCall, type RequestSpec } from './transport';

/** Typed client of the AI gateway, authenticated with an API key (`x-api-key`). */
export type GatewayClient = {
  /** `GET /health`. */
  health(options?: CallOptions): Promise<HealthResponse>;
  /** `POST /api/v1/ai/chat/completions`. */
  chat(request: ChatCompletionInput, options?: CallOptions): Promise<ChatCompletionResponse>;
  /**
   * `POST /api/v1/ai/chat/stream` as an async iterator of `chunk`, then `done` or
   * `error` events. The request is sent on the first `next()`; `break`,
   * `return()` or the `signal` close the connection.
   */
  chatStream(request: ChatCompletionInput, options?: CallOptions): ChatStream;
  /** `POST /api/v1/ai/image`: base64 PNG images. */
  image(request: ImageInput, options?: CallOptions): Promise<ImageResponse>;
  /** `POST /api/v1/ai/tts`: the audio bytes and their Content-Type (which follows `format`). */
  tts(request: TtsInput, options?: CallOptions): Promise<BinaryResponse>;
  /** `POST /api/v1/ai/music`: `audio/mpeg` bytes. */
  music(request: MusicInput, options?: CallOptions): Promise<BinaryResponse>;
  /** `POST /api/v1/ai/soundfx`: `audio/mpeg` bytes. */
  soundfx(request: SoundFxInput, options?: CallOptions): Promise<BinaryResponse>;
  /** Stored provider keys (bring your own key). */
  keys: {
    /** `GET /api/v1/keys`: providers with a stored key, never the keys. */
    list(options?: CallOptions): Promise<ListProviderKeysResponse>;
    /** `POST /api/v1/keys`: stores or replaces the key of a provider. */
    put(request: StoreProviderKeyInput, options?: CallOptions): Promise<StoredProviderKey>;
    /** `DELETE /api/v1/keys/{provider}`. */
    delete(provider: string, options?: CallOptions): Promise<void>;
  };
  /** `GET /api/v1/me`: the user owning the API key. */
  me(options?: CallOptions): Promise<MeResponse>;
  /** `GET /api/v1/usage`: requests and tokens per project and day. */
  usage(query: UsageQueryInput, options?: CallOptions): Promise<UsageResponse>;
};

/**
 * The gateway answers 504 after 60 s without a provider answer; the client waits
 * a little longer so that the 504 (and its request id) arrives instead of a timeout.
 */
const DEFAULT_TIMEOUT_MS = 65_000;

/**
 * Creates a gateway client. Every call, AI POSTs included, follows the spec's
 * retry table, which the spec writes for exactly these endpoints: a 504 is
 * the gateway's "provider timed out", and retrying it is the recommended
 * reaction. Pass `retry: false` on a call whose repetition would cost too much.
 */
export function createGatewayClient(options: ClientOptions): GatewayClient {
  const transport = createTransport(options, 'x-api-key', DEFAULT_TIMEOUT_MS);

  function json<T>(spec: Omit<RequestSpec, 'retryable'>, schema: ResponseSchema<T>, call: CallOptions = {}) {
    return executeCall(transport, { ...spec, retryable: true }, call, readJson(schema));
  }
  function media(path: string, body: unknown, call: CallOptions = {}) {
    const headers = { accept: '*/*' };
    return executeCall(transport, { method: 'POST', path, body, headers, retryable: true }, call, readBytes);
  }

  return {
    health: (call) => json({ method: 'GET', path: '/health' }, ZHealthResponse, call),
    chat: (body, call) =>
      json({ method: 'POST', path: '/api/v1/ai/chat/completions', body }, ZChatCompletionResponse, call),
    chatStream: (body, call = {}) => streamChat(transport, body, call),
    image: (body, call) => json({ method: 'POST', path: '/api/v1/ai/image', body }, ZImageResponse, call),
    tts: (body, call) => media('/api/v1/ai/tts', body, call),
    music: (body, call) => media('/api/v1/ai/music', body, call),
    soundfx: (body, call) => media('/api/v1/ai/soundfx', body, call),
    keys: {
      list: (call) => json({ method: 'GET', path: '/api/v1/keys' }, ZListProviderKeysResponse, call),
      put: (body, call) => json({ method: 'POST', path: '/api/v1/keys', body }, ZStoredProviderKey, call),
      delete: (provider, call = {}) =>
        executeCall(
          transport,
          { method: 'DELETE', path: `/api/v1/keys/${encodeURIComponent(provider)}`, retryable: true },
          call,
          readNothing,
        ),
    },
    me: (call) => json({ method: 'GET', path: '/api/v1/me' }, ZMeResponse, call),
    usage: ({ from, to, project_id }, call) =>
      json({ method: 'GET', path: '/api/v1/usage', query: { from, to, project_id } }, ZUsageResponse, call),
  };
}
