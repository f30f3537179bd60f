import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '@platform/errors/codes';
import { z } from 'zod';
import {
  MAX_API_KEYS_PER_USER,
  SESSION_COOKIE_NAME,
  ZCreateApiKeyRequest,
  ZCreateApiKeyResponse,
  ZListApiKeysResponse,
  ZLogoutResponse,
  ZMeResponse,
  ZRequestMagicLinkRequest,
  ZRequestMagicLinkResponse,
  ZRevokeApiKeyRequest,
  ZRevokeApiKeyResponse,
  ZSessionResponse,
  ZUpdateApiKeyRulesRequest,
  ZUpdateApiKeyRulesResponse,
  ZVerifyCodeRequest,
  ZVerifyCodeResponse,
} from './gateway-auth';
import { buildErrorResponses } from './openapi-errors';
import { jsonBody, jsonResponse } from './openapi-shared';

const TAG = 'Auth';

/** What the magic link carries: the code and, with a redirect_url, its signed state. */
const ZMagicLinkQuery = z.object({
  code: z.string().min(1).max(512),
  state: z
    .string()
    .max(4096)
    .optional()
    .meta({ description: 'Signed (JWS) redirect_url bound to this code.' }),
});
const ZVerifyCodeForm = ZMagicLinkQuery;
const KEYS_TAG = 'API keys';
const session = [{ SessionCookie: [] }];
/** Either credential; OpenAPI lists alternatives as separate requirement objects. */
export const SESSION_OR_API_KEY: Record<string, string[]>[] = [{ SessionCookie: [] }, { ApiKeyAuth: [] }];

const BODY_ERRORS: readonly ErrorCode[] = [
  'validation_failed',
  'deserialization_error',
  'payload_too_large',
  'unsupported_media_type',
];
const SESSION_WRITE_ERRORS: readonly ErrorCode[] = [
  ...BODY_ERRORS,
  'missing_authentication',
  'csrf_origin',
  'rate_limited',
  'internal',
];

const setCookie = (description: string) => ({
  'Set-Cookie': {
    description,
    schema: {
      type: 'string' as const,
      example: `${SESSION_COOKIE_NAME}=…; Path=/; HttpOnly; Secure; SameSite=Lax`,
    },
  },
});

function registerSignInPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/api/v1/auth/request-magic-link',
    operationId: 'requestMagicLink',
    summary: 'Send a sign-in link by e-mail',
    description: 'The answer is the same whether or not the address can sign in.',
    tags: [TAG],
    request: { body: jsonBody(ZRequestMagicLinkRequest) },
    responses: {
      202: jsonResponse('Accepted; a link is sent if the address can sign in.', ZRequestMagicLinkResponse),
      ...buildErrorResponses([
        ...BODY_ERRORS,
        'invalid_redirect_url',
        'sso_required',
        'rate_limited',
        'internal',
      ]),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/auth/magic-link',
    operationId: 'openMagicLink',
    summary: 'The page a magic link opens',
    description:
      'An HTML page with a "Sign in" button that posts the code to verify-code. Opening the ' +
      'link does not use the code, so mail scanners that fetch links cannot spend it. A ' +
      'malformed link gets an HTML error page with status 400. Mails carry this link when ' +
      'the request named a `redirect_url`; otherwise they link to the web console ' +
      '(`/?code=…`), which asks for the same button press and posts the code as JSON.',
    tags: [TAG],
    request: { query: ZMagicLinkQuery },
    responses: {
      200: { description: 'The confirm page.', content: { 'text/html': { schema: { type: 'string' } } } },
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/auth/verify-code',
    operationId: 'verifyCode',
    summary: 'Consume a magic-link code and start a session',
    description:
      'A code works once and expires; the session is set as a cookie. The confirm page of ' +
      '`GET /api/v1/auth/magic-link` posts the same fields as a form, plus the signed `state`; ' +
      'that form variant answers 303 to the signed redirect_url, or an HTML page.',
    tags: [TAG],
    request: {
      body: {
        required: true,
        content: {
          'application/json': { schema: ZVerifyCodeRequest },
          'application/x-www-form-urlencoded': { schema: ZVerifyCodeForm },
        },
      },
    },
    responses: {
      200: {
        ...jsonResponse('Signed in.', ZVerifyCodeResponse),
        headers: setCookie(`The \`${SESSION_COOKIE_NAME}\` session cookie.`),
      },
      303: {
        description: 'Form variant: signed in, sent on to the redirect_url carried by the signed state.',
        headers: {
          ...setCookie(`The \`${SESSION_COOKIE_NAME}\` session cookie.`),
          Location: { description: 'The allowlisted redirect_url.', schema: { type: 'string' as const } },
        },
      },
      ...buildErrorResponses([...BODY_ERRORS, 'invalid_code', 'sso_required', 'rate_limited', 'internal']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/auth/session',
    operationId: 'getSession',
    summary: 'Current session',
    tags: [TAG],
    security: session,
    responses: {
      200: jsonResponse('The session of the cookie.', ZSessionResponse),
      ...buildErrorResponses(['missing_authentication', 'rate_limited', 'internal']),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/auth/logout',
    operationId: 'logout',
    summary: 'End the current session',
    description: 'Idempotent: also answers 200 when no session is present. Clears the cookie.',
    tags: [TAG],
    security: session,
    responses: {
      200: {
        ...jsonResponse('Signed out.', ZLogoutResponse),
        headers: setCookie('Expires the session cookie.'),
      },
      ...buildErrorResponses(['csrf_origin', 'rate_limited', 'internal']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/me',
    operationId: 'getMe',
    summary: 'Current user profile',
    tags: [TAG],
    security: SESSION_OR_API_KEY,
    responses: {
      200: jsonResponse('The signed-in user and how they authenticated.', ZMeResponse),
      ...buildErrorResponses(['missing_authentication', 'invalid_api_key', 'rate_limited', 'internal']),
    },
  });
}

function registerApiKeyPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/api/v1/auth/api-keys',
    operationId: 'createApiKey',
    summary: 'Create an API key',
    description: `The plaintext key is returned only here. At most ${MAX_API_KEYS_PER_USER} keys per user (revoked keys do not count); browser requests must carry an allowed Origin.`,
    tags: [KEYS_TAG],
    security: session,
    request: { body: jsonBody(ZCreateApiKeyRequest) },
    responses: {
      201: jsonResponse('Key created.', ZCreateApiKeyResponse),
      ...buildErrorResponses([...SESSION_WRITE_ERRORS, 'maximum_keys']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/auth/api-keys/list',
    operationId: 'listApiKeys',
    summary: 'List own API keys (no plaintext)',
    tags: [KEYS_TAG],
    security: session,
    responses: {
      200: jsonResponse('Keys of the user, newest first.', ZListApiKeysResponse),
      ...buildErrorResponses(['missing_authentication', 'rate_limited', 'internal']),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/auth/api-keys/revoke',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    description: 'Later use of the key yields 401 invalid api key. Revoking a revoked key answers 200 again.',
    tags: [KEYS_TAG],
    security: session,
    request: { body: jsonBody(ZRevokeApiKeyRequest) },
    responses: {
      200: jsonResponse('Key revoked.', ZRevokeApiKeyResponse),
      ...buildErrorResponses([...SESSION_WRITE_ERRORS, 'api_key_not_found']),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/auth/api-keys/rules',
    operationId: 'updateApiKeyRules',
    summary: "Replace an API key's rules and expiry",
    description:
      'Lanes, models, requests and tokens per minute, concurrent requests, expiry (docs/teams.md#key-rules); null clears. Every instance applies the change at once (its cached copy of the key is dropped).',
    tags: [KEYS_TAG],
    security: session,
    request: { body: jsonBody(ZUpdateApiKeyRulesRequest) },
    responses: {
      200: jsonResponse(
        'Rules replaced: the key id and the rules and expiry now in force.',
        ZUpdateApiKeyRulesResponse,
      ),
      ...buildErrorResponses([...SESSION_WRITE_ERRORS, 'api_key_not_found']),
    },
  });
}

const ZSsoStartQuery = z.object({
  redirect_url: z
    .string()
    .max(2048)
    .optional()
    .meta({ description: 'Where to send the browser once signed in: the gateway or GATEWAY_CORS_ORIGINS.' }),
});
const ZSsoCallbackQuery = z.object({
  code: z.string().max(2048).optional(),
  state: z.string().max(128).optional(),
  iss: z.string().max(2048).optional(),
  error: z.string().max(256).optional(),
});
const redirectTo = (description: string) => ({
  description,
  headers: { Location: { description: 'Where the browser goes next.', schema: { type: 'string' as const } } },
});

/** OpenID Connect sign-in (docs/teams.md#single-sign-on): two browser navigations. */
function registerSsoPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/v1/auth/sso/start',
    operationId: 'startSso',
    summary: 'Start single sign-on at the identity provider',
    description:
      'Sends the browser to the OpenID provider (OIDC_ISSUER) with PKCE (S256), state and nonce. The ' +
      'state is usable once, for 10 minutes, and bound to this browser by an HttpOnly cookie.',
    tags: [TAG],
    request: { query: ZSsoStartQuery },
    responses: {
      302: redirectTo("The provider's authorization endpoint."),
      ...buildErrorResponses([
        'invalid_redirect_url',
        'sso_not_configured',
        'sso_unavailable',
        'rate_limited',
        'internal',
      ]),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/auth/sso/callback',
    operationId: 'finishSso',
    summary: 'Where the identity provider sends the browser back',
    description:
      'Redeems the code (with the PKCE verifier), verifies the ID token (signature, issuer, audience, nonce) and its e-mail domain (OIDC_ALLOWED_DOMAINS), applies OIDC_ROLE_MAP, starts the session and sends the browser on. Register this URL (or OIDC_REDIRECT_URI) at the provider.',
    tags: [TAG],
    request: { query: ZSsoCallbackQuery },
    responses: {
      303: {
        ...redirectTo("Signed in: the start's redirect_url, else the web console."),
        headers: {
          ...setCookie(`The \`${SESSION_COOKIE_NAME}\` session cookie.`),
          Location: { description: 'Where the browser goes next.', schema: { type: 'string' as const } },
        },
      },
      ...buildErrorResponses([
        'sso_invalid_state',
        'sso_failed',
        'sso_domain_not_allowed',
        'sso_not_configured',
        'sso_unavailable',
        'internal',
      ]),
    },
  });
}

/** Registers sign-in, session, profile and API key management. */
export function registerAuthPaths(registry: OpenAPIRegistry): void {
  registerSignInPaths(registry);
  registerSsoPaths(registry);
  registerApiKeyPaths(registry);
}

export const AUTH_TAGS = [
  { name: TAG, description: 'Magic-link and single sign-on, sessions and the user profile.' },
  { name: KEYS_TAG, description: 'API keys of the signed-in user.' },
];
