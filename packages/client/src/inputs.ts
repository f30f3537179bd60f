import type {
  ZBudgetId,
  ZChatCompletionRequest,
  ZCreateCartCheckoutRequest,
  ZCreateItemCheckoutRequest,
  ZCreatePortalSessionRequest,
  ZCreateSubscriptionCheckoutRequest,
  ZImageRequest,
  ZMusicRequest,
  ZSetBudgetRequest,
  ZSoundFxRequest,
  ZStoreProviderKeyRequest,
  ZTtsRequest,
  ZUsageEventsRequest,
  ZUsageQuery,
} from '@platform/contract';
import type { InputOf } from './options';

// What callers pass to the clients: the contract's request schemas before defaults apply.

export type ChatCompletionInput = InputOf<typeof ZChatCompletionRequest>;
export type ImageInput = InputOf<typeof ZImageRequest>;
export type TtsInput = InputOf<typeof ZTtsRequest>;
export type MusicInput = InputOf<typeof ZMusicRequest>;
export type SoundFxInput = InputOf<typeof ZSoundFxRequest>;
export type StoreProviderKeyInput = InputOf<typeof ZStoreProviderKeyRequest>;
export type UsageQueryInput = InputOf<typeof ZUsageQuery>;
/** A page of a usage feed: where to resume and how many records (1-1000, default 100). */
export type UsageFeedInput = { cursor?: string; limit?: number };
export type SetBudgetInput = InputOf<typeof ZSetBudgetRequest>;
export type BudgetIdInput = InputOf<typeof ZBudgetId>;
export type CreateSubscriptionCheckoutInput = InputOf<typeof ZCreateSubscriptionCheckoutRequest>;
export type CreateItemCheckoutInput = InputOf<typeof ZCreateItemCheckoutRequest>;
export type CreateCartCheckoutInput = InputOf<typeof ZCreateCartCheckoutRequest>;
export type CreatePortalSessionInput = InputOf<typeof ZCreatePortalSessionRequest>;
/** `POST /api/v1/usage-events` (payment): a batch of usage events for Stripe Billing Meters. */
export type RecordUsageEventsInput = InputOf<typeof ZUsageEventsRequest>;
