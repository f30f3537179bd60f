import { z } from 'zod';
import { ZEmail, ZHttpUrl, ZIsoTimestamp } from './common';

/** Name of the session cookie set by verify-code. */
export const SESSION_COOKIE_NAME = 'gw_session';
/** The spec's limit of API keys per user. */
export const MAX_API_KEYS_PER_USER = 5;
/**
 * The body of every accepted magic-link request. It is the same whether or not
 * the address has an account, so the endpoint cannot be used to probe addresses.
 */
export const MAGIC_LINK_SENT_MESSAGE = 'if the address can sign in, a link has been sent';

/** `POST /api/v1/auth/request-magic-link`. */
export const ZRequestMagicLinkRequest = z
  .object({
    email: ZEmail,
    redirect_url: ZHttpUrl.optional().meta({
      description: 'Where the link leads after sign-in; its origin must be on the allowlist.',
    }),
  })
  .meta({ id: 'RequestMagicLinkRequest' });
export type RequestMagicLinkRequest = z.infer<typeof ZRequestMagicLinkRequest>;

/** 202 answer of request-magic-link. */
export const ZRequestMagicLinkResponse = z
  .object({ message: z.literal(MAGIC_LINK_SENT_MESSAGE) })
  .meta({ id: 'RequestMagicLinkResponse' });
export type RequestMagicLinkResponse = z.infer<typeof ZRequestMagicLinkResponse>;

/** `POST /api/v1/auth/verify-code`: the code from the link. */
export const ZVerifyCodeRequest = z
  .object({ code: z.string().min(1).max(512).meta({ description: 'The code from the magic link.' }) })
  .meta({ id: 'VerifyCodeRequest' });
export type VerifyCodeRequest = z.infer<typeof ZVerifyCodeRequest>;

/** A gateway user as the API shows it. */
export const ZUser = z
  .object({
    id: z.uuid().meta({ example: '7d9f1c2b-3a4e-4f5d-8b6c-1e2f3a4b5c6d' }),
    email: ZEmail,
    created_at: ZIsoTimestamp,
  })
  .meta({ id: 'User' });
export type User = z.infer<typeof ZUser>;

/** 200 answer of verify-code; the session itself travels in the Set-Cookie header. */
export const ZVerifyCodeResponse = z
  .object({
    user: ZUser,
    session: z.object({ expires_at: ZIsoTimestamp }),
  })
  .meta({ id: 'VerifyCodeResponse' });
export type VerifyCodeResponse = z.infer<typeof ZVerifyCodeResponse>;

/** `GET /api/v1/auth/session`. */
export const ZSessionResponse = z
  .object({
    user_id: z.uuid(),
    email: ZEmail,
    expires_at: ZIsoTimestamp,
    created_at: ZIsoTimestamp.meta({ description: 'When the session was created.' }),
  })
  .meta({ id: 'SessionResponse' });
export type SessionResponse = z.infer<typeof ZSessionResponse>;

/** `POST /api/v1/auth/logout`: idempotent, also when no session is present. */
export const ZLogoutResponse = z.object({ logged_out: z.literal(true) }).meta({ id: 'LogoutResponse' });
export type LogoutResponse = z.infer<typeof ZLogoutResponse>;

/** How the caller of `/api/v1/me` authenticated. */
export const ZAuthMethod = z.enum(['session', 'api_key']);
export type AuthMethod = z.infer<typeof ZAuthMethod>;

/** `GET /api/v1/me`. */
export const ZMeResponse = z
  .object({ id: z.uuid(), email: ZEmail, created_at: ZIsoTimestamp, auth: ZAuthMethod })
  .meta({ id: 'MeResponse' });
export type MeResponse = z.infer<typeof ZMeResponse>;

/** API key scopes; the spec names only `ai`. */
export const API_KEY_SCOPES = ['ai'] as const;
export const ZApiKeyScope = z.enum(API_KEY_SCOPES);
export type ApiKeyScope = z.infer<typeof ZApiKeyScope>;

/** Key names are 1 to 64 ASCII letters and digits (the spec says alphanumeric). */
export const API_KEY_NAME_PATTERN = /^[A-Za-z0-9]{1,64}$/;

/** A lane or model name in a key's rules: printable ASCII without spaces, as lanes and model ids are. */
const ZRuleName = z
  .string()
  .regex(/^[\x21-\x7e]{1,128}$/, 'must be 1 to 128 printable characters without spaces');

/**
 * The rules a key may carry (docs/teams.md#key-rules); each absent rule does
 * not restrict. `models` entries are `provider/model` or a bare model id.
 */
export const ZApiKeyRules = z
  .strictObject({
    lanes: z.array(ZRuleName).min(1).max(32).optional(),
    models: z.array(ZRuleName).min(1).max(64).optional(),
    requests_per_minute: z.number().int().min(1).max(1_000_000).optional(),
    tokens_per_minute: z.number().int().min(1).max(1_000_000_000).optional(),
    concurrent_requests: z.number().int().min(1).max(10_000).optional(),
  })
  .meta({ id: 'ApiKeyRules' });
export type ApiKeyRules = z.infer<typeof ZApiKeyRules>;

/** `POST /api/v1/auth/api-keys`. */
export const ZCreateApiKeyRequest = z
  .object({
    name: z
      .string()
      .regex(API_KEY_NAME_PATTERN)
      .meta({ description: '1 to 64 letters or digits.', example: 'ci' }),
    scope: ZApiKeyScope.default('ai'),
    rules: ZApiKeyRules.optional(),
    expires_at: ZIsoTimestamp.optional().meta({ description: 'When the key stops working; absent: never.' }),
  })
  .meta({ id: 'CreateApiKeyRequest' });
export type CreateApiKeyRequest = z.infer<typeof ZCreateApiKeyRequest>;

const ZKeyId = z.uuid().meta({ example: '5b7e2f10-9c3d-4a8b-b1e2-6f7a8b9c0d1e' });

/** What the creation answer and every entry of the key list say about a key. */
const keyFields = {
  key_id: ZKeyId,
  key_prefix: z.string().meta({ description: 'Leading characters of the key.', example: 'gw_live_3kT9' }),
  name: z.string(),
  scope: ZApiKeyScope,
};

/** 201 answer of key creation; the only time the plaintext key is shown. */
export const ZCreateApiKeyResponse = z
  .object({
    key: z.string().meta({ description: 'Plaintext key; shown only in this response.' }),
    ...keyFields,
  })
  .meta({ id: 'CreateApiKeyResponse' });
export type CreateApiKeyResponse = z.infer<typeof ZCreateApiKeyResponse>;

export const ZApiKeyStatus = z.enum(['active', 'revoked']);
export type ApiKeyStatus = z.infer<typeof ZApiKeyStatus>;

/** One entry of the key list; never carries the plaintext or the hash. */
export const ZApiKeySummary = z
  .object({
    ...keyFields,
    created_at: ZIsoTimestamp,
    last_used_at: ZIsoTimestamp.nullable(),
    status: ZApiKeyStatus,
    rules: ZApiKeyRules.optional(),
    expires_at: ZIsoTimestamp.nullable().optional(),
  })
  .meta({ id: 'ApiKeySummary' });
export type ApiKeySummary = z.infer<typeof ZApiKeySummary>;

/** `GET /api/v1/auth/api-keys/list`. */
export const ZListApiKeysResponse = z
  .object({ keys: z.array(ZApiKeySummary) })
  .meta({ id: 'ListApiKeysResponse' });
export type ListApiKeysResponse = z.infer<typeof ZListApiKeysResponse>;

/** `POST /api/v1/auth/api-keys/revoke`. */
export const ZRevokeApiKeyRequest = z.object({ key_id: ZKeyId }).meta({ id: 'RevokeApiKeyRequest' });
export type RevokeApiKeyRequest = z.infer<typeof ZRevokeApiKeyRequest>;

export const ZRevokeApiKeyResponse = z
  .object({ key_id: ZKeyId, status: z.literal('revoked') })
  .meta({ id: 'RevokeApiKeyResponse' });
export type RevokeApiKeyResponse = z.infer<typeof ZRevokeApiKeyResponse>;

/** `POST /api/v1/auth/api-keys/rules`: replaces a key's rules and expiry (null clears them). */
export const ZUpdateApiKeyRulesRequest = z
  .strictObject({ key_id: ZKeyId, rules: ZApiKeyRules.nullable(), expires_at: ZIsoTimestamp.nullable() })
  .meta({ id: 'UpdateApiKeyRulesRequest' });
export type UpdateApiKeyRulesRequest = z.infer<typeof ZUpdateApiKeyRulesRequest>;

export const ZUpdateApiKeyRulesResponse = z
  .object({ key_id: ZKeyId, rules: ZApiKeyRules.nullable(), expires_at: ZIsoTimestamp.nullable() })
  .meta({ id: 'UpdateApiKeyRulesResponse' });
export type UpdateApiKeyRulesResponse = z.infer<typeof ZUpdateApiKeyRulesResponse>;
