import { z } from 'zod';
import { ZIsoTimestamp } from './common';

/** Providers whose keys a user may store (bring your own key). */
export const PROVIDERS = ['openai', 'openrouter', 'groq', 'cerebras', 'google', 'elevenlabs'] as const;
export const ZProvider = z.enum(PROVIDERS).meta({ id: 'Provider' });
export type Provider = z.infer<typeof ZProvider>;

/** `POST /api/v1/keys`: stores (or replaces) the caller's key for a provider. */
export const ZStoreProviderKeyRequest = z
  .object({
    provider: ZProvider,
    // Printable ASCII only: provider keys never contain spaces, and a pasted
    // trailing newline would otherwise be stored and fail at every call.
    key: z
      .string()
      .min(8)
      .max(512)
      .regex(/^[\x21-\x7e]+$/, { message: 'must be printable ASCII without spaces' })
      .meta({ description: 'The provider API key; stored encrypted, never returned.' }),
  })
  .meta({ id: 'StoreProviderKeyRequest' });
export type StoreProviderKeyRequest = z.infer<typeof ZStoreProviderKeyRequest>;

/** A stored key as the API shows it: never the key itself, only its last 4 characters. */
export const ZStoredProviderKey = z
  .object({
    provider: ZProvider,
    created_at: ZIsoTimestamp,
    last4: z.string().meta({ description: 'Last 4 characters of the key.', example: 'x9Qz' }),
  })
  .meta({ id: 'StoredProviderKey' });
export type StoredProviderKey = z.infer<typeof ZStoredProviderKey>;

/** `GET /api/v1/keys`: a bare JSON array, one entry per provider with a stored key. */
export const ZListProviderKeysResponse = z.array(ZStoredProviderKey).meta({ id: 'ListProviderKeysResponse' });
export type ListProviderKeysResponse = z.infer<typeof ZListProviderKeysResponse>;

/**
 * Path of `DELETE /api/v1/keys/{provider}`. The route answers a name outside
 * the list with 400 unknown provider, so this is a plain string.
 */
export const ZProviderKeyParams = z.object({
  provider: z
    .string()
    .min(1)
    .max(64)
    .meta({ description: `One of: ${PROVIDERS.join(', ')}.`, example: 'openai' }),
});
export type ProviderKeyParams = z.infer<typeof ZProviderKeyParams>;
