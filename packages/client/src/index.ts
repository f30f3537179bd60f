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
  createGatewayClient,
  createGatewayServiceClient,
  type GatewayClient,
  type GatewayServiceClient,
  type GatewayServiceClientOptions,
} from './gateway-client';
export type * from './inputs';
export type { ClientOptions, InputOf } from './options';
export {
  createPaymentClient,
  isSubscriptionExistsError,
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
