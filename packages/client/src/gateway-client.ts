import {
  type Budget,
  type ChatCompletionResponse,
  type HealthResponse,
  type ImageResponse,
  type ListBudgetsResponse,
  type ListProviderKeysResponse,
  type MeResponse,
  type StoredProviderKey,
  type UsageFeedResponse,
  type UsageResponse,
  type UsageTodayResponse,
  ZBudget,
  ZChatCompletionResponse,
  ZHealthResponse,
  ZImageResponse,
  ZListBudgetsResponse,
  ZListProviderKeysResponse,
  ZMeResponse,
  ZStoredProviderKey,
  ZUsageFeedResponse,
  ZUsageResponse,
  ZUsageTodayResponse,
} from '@platform/contract';
import { type ChatStream, streamChat } from './chat-stream';
import type {
  BudgetIdInput,
  ChatCompletionInput,
  ImageInput,
  MusicInput,
  SetBudgetInput,
  SoundFxInput,
  StoreProviderKeyInput,
  TtsInput,
  UsageFeedInput,
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
  /** `GET /api/v1/usage/today`: today's tokens against the daily token budget. */
  usageToday(options?: CallOptions): Promise<UsageTodayResponse>;
  /** `GET /api/v1/usage/records`: the caller's ledger records, oldest first; pass `next_cursor` on. */
  usageRecords(query?: UsageFeedInput, options?: CallOptions): Promise<UsageFeedResponse>;
  /** Token and cost budgets per user, API key and project. */
  budgets: {
    /** `GET /api/v1/budgets`. */
    list(options?: CallOptions): Promise<ListBudgetsResponse>;
    /** `PUT /api/v1/budgets`: sets or replaces one budget. */
    set(request: SetBudgetInput, options?: CallOptions): Promise<Budget>;
    /** `DELETE /api/v1/budgets`: removes a budget you set. */
    delete(id: BudgetIdInput, options?: CallOptions): Promise<void>;
  };
};

/** Query of a feed page as strings. */
function feedQuery(query: {
  cursor?: string | undefined;
  limit?: number | undefined;
  user_id?: string | undefined;
}) {
  return {
    cursor: query.cursor,
    limit: query.limit === undefined ? undefined : String(query.limit),
    user_id: query.user_id,
  };
}

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
    usageToday: (call) => json({ method: 'GET', path: '/api/v1/usage/today' }, ZUsageTodayResponse, call),
    usageRecords: (query = {}, call) =>
      json(
        { method: 'GET', path: '/api/v1/usage/records', query: feedQuery(query) },
        ZUsageFeedResponse,
        call,
      ),
    budgets: {
      list: (call) => json({ method: 'GET', path: '/api/v1/budgets' }, ZListBudgetsResponse, call),
      set: (body, call) => json({ method: 'PUT', path: '/api/v1/budgets', body }, ZBudget, call),
      delete: ({ scope, subject, period, unit }, call = {}) =>
        executeCall(
          transport,
          {
            method: 'DELETE',
            path: '/api/v1/budgets',
            query: { scope, subject, period, unit },
            retryable: true,
          },
          call,
          readNothing,
        ),
    },
  };
}

/** Options of `createGatewayServiceClient`: the service token instead of an API key. */
export type GatewayServiceClientOptions = Omit<ClientOptions, 'apiKey'> & {
  /** GATEWAY_SERVICE_TOKEN of the gateway, sent as `Authorization: Bearer`. */
  serviceToken: string;
};

/** Client of the gateway's service endpoints (in-house services such as the billing shipper). */
export type GatewayServiceClient = {
  /**
   * `GET /api/v1/usage/feed`: every user's ledger records (or one user's),
   * oldest first. Resume from `next_cursor`; a page never skips a record.
   */
  usageFeed(query?: UsageFeedInput & { user_id?: string }, options?: CallOptions): Promise<UsageFeedResponse>;
};

export function createGatewayServiceClient(options: GatewayServiceClientOptions): GatewayServiceClient {
  const base = createTransport(
    { ...options, apiKey: options.serviceToken },
    'authorization',
    DEFAULT_TIMEOUT_MS,
  );
  const transport = { ...base, headers: { authorization: `Bearer ${options.serviceToken}` } };
  return {
    usageFeed: (query = {}, call = {}) =>
      executeCall(
        transport,
        { method: 'GET', path: '/api/v1/usage/feed', query: feedQuery(query), retryable: true },
        call,
        readJson(ZUsageFeedResponse),
      ),
  };
}
