// What callers pass to the clients: the contract's request schemas before defaults apply,
// named where the schemas are declared.
export type {
  BudgetIdInput,
  ChatCompletionInput,
  CreateCartCheckoutInput,
  CreateItemCheckoutInput,
  CreatePortalSessionInput,
  CreateSubscriptionCheckoutInput,
  ImageInput,
  MusicInput,
  RecordUsageEventsInput,
  SetBudgetInput,
  SoundFxInput,
  StoreProviderKeyInput,
  TtsInput,
  UsageQueryInput,
} from '@platform/contract';

/** A page of a usage feed: where to resume and how many records (1-1000, default 100). */
export type UsageFeedInput = { cursor?: string; limit?: number };
