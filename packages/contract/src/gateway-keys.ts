import { z } from 'zod';
import { ZIsoTimestamp } from './common';
import { PROVIDERS } from './providers';

export { PROVIDER_LABELS, PROVIDERS } from './providers';

/** The built-in providers (providers.ts). */
export const ZProvider = z.enum(PROVIDERS).meta({ id: 'Provider' });
export type Provider = z.infer<typeof ZProvider>;

/**
 * A provider whose key a user may store (bring your own key): a built-in one,
 * or one the gateway's lanes config adds (its name is checked by the gateway,
 * 400 `validation failed` when it knows none such; `GET /api/v1/config` lists them).
 */
export const ZProviderName = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}$/, { message: 'unknown provider' })
  .meta({
    id: 'ProviderName',
    description: `A built-in provider (${PROVIDERS.join(', ')}) or one the gateway's configuration adds.`,
    example: 'openai',
  });

/** `POST /api/v1/keys`: stores (or replaces) the caller's key for a provider. */
export const ZStoreProviderKeyRequest = z
  .object({
    provider: ZProviderName,
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
export type StoreProviderKeyInput = z.input<typeof ZStoreProviderKeyRequest>;

/** A stored key as the API shows it: never the key itself, only its last 4 characters. */
export const ZStoredProviderKey = z
  .object({
    provider: ZProviderName,
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
    .meta({
      description: `One of: ${PROVIDERS.join(', ')}, or a provider the gateway's configuration adds.`,
      example: 'openai',
    }),
});
export type ProviderKeyParams = z.infer<typeof ZProviderKeyParams>;
