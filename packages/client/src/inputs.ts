import type {
  ZChatCompletionRequest,
  ZCreateCartCheckoutRequest,
  ZCreateItemCheckoutRequest,
  ZCreatePortalSessionRequest,
  ZCreateSubscriptionCheckoutRequest,
  ZImageRequest,
  ZMusicRequest,
  ZSoundFxRequest,
  ZStoreProviderKeyRequest,
  ZTtsRequest,
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
export type CreateSubscriptionCheckoutInput = InputOf<typeof ZCreateSubscriptionCheckoutRequest>;
export type CreateItemCheckoutInput = InputOf<typeof ZCreateItemCheckoutRequest>;
export type CreateCartCheckoutInput = InputOf<typeof ZCreateCartCheckoutRequest>;
export type CreatePortalSessionInput = InputOf<typeof ZCreatePortalSessionRequest>;
