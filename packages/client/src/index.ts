export type { ChatStream, ChatStreamEvent } from './chat-stream';
export {
  type ApiErrorDetail,
  type AttemptRecord,
  NetworkError,
  PlatformApiError,
  PlatformClientError,
  ResponseValidationError,
} from './errors';
export {
  type ChatCompletionInput,
  createGatewayClient,
  type GatewayClient,
  type ImageInput,
  type MusicInput,
  type SoundFxInput,
  type StoreProviderKeyInput,
  type TtsInput,
  type UsageQueryInput,
} from './gateway-client';
export type { ClientOptions, InputOf } from './options';
export {
  type CreateCartCheckoutInput,
  type CreateItemCheckoutInput,
  type CreatePortalSessionInput,
  type CreateSubscriptionCheckoutInput,
  createPaymentClient,
  type PaymentClient,
  type PaymentWriteOptions,
} from './payment-client';
export type { BinaryResponse } from './responses';
export {
  DEFAULT_BACKOFF_MS,
  DEFAULT_MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  type RetryOptions,
} from './retry-policy';
export type { Sleep } from './sleep';
export { type SseEvent, SseParser } from './sse';
export type { CallOptions, RetryEvent } from './transport';
