/**
 * The closed list of error codes of both services. The key is what code refers
 * to; `error` is the exact string sent in the body (copied from the specs where
 * they define it) and `status` its HTTP status.
 */
export const ERROR_CODES = {
  // --- shared ---------------------------------------------------------------
  /** The JSON body could not be parsed, a required field is absent or has the wrong type. */
  deserialization_error: { status: 422, error: 'deserialization error' },
  /** A field is present but its value breaks a rule. `details` lists the fields. */
  validation_failed: { status: 400, error: 'validation failed' },
  /** The body is larger than the route accepts. */
  payload_too_large: { status: 413, error: 'payload too large' },
  /** Unsupported Content-Type on a route that takes JSON. */
  unsupported_media_type: { status: 415, error: 'unsupported media type' },
  not_found: { status: 404, error: 'not found' },
  method_not_allowed: { status: 405, error: 'method not allowed' },
  rate_limited: { status: 429, error: 'rate_limited' },
  internal: { status: 500, error: 'internal error' },
  service_unavailable: { status: 503, error: 'service unavailable' },
  /** Node's HTTP parser refused the request (control bytes in a header value, malformed request line). */
  bad_request: { status: 400, error: 'bad request' },
  /** Request line and headers over Node's 16 kB limit. */
  header_fields_too_large: { status: 431, error: 'request header fields too large' },
  /** The request did not arrive completely within the server's header/request timeout. */
  request_timeout: { status: 408, error: 'request timeout' },

  // --- authentication (gateway spec, reused by payment) -----------------------
  missing_api_key: { status: 401, error: 'missing api key' },
  invalid_api_key: { status: 401, error: 'invalid api key' },
  missing_authentication: { status: 401, error: 'missing_authentication' },
  csrf_origin: { status: 403, error: 'csrf_origin' },
  maximum_keys: { status: 400, error: 'maximum_keys' },
  forbidden: { status: 403, error: 'forbidden' },

  // --- gateway sign-in --------------------------------------------------------
  invalid_code: { status: 400, error: 'invalid or expired code' },
  invalid_redirect_url: { status: 400, error: 'redirect_url is not allowed' },
  api_key_not_found: { status: 404, error: 'api key not found' },
  // --- gateway single sign-on (docs/teams.md#single-sign-on); `details` names the reason ---
  sso_not_configured: { status: 404, error: 'single sign-on is not configured' },
  /** The address's domain signs in through SSO (OIDC_ALLOWED_DOMAINS) and OIDC_MAGIC_LINK_FALLBACK is off. */
  sso_required: { status: 403, error: 'this e-mail domain signs in through single sign-on' },
  sso_domain_not_allowed: { status: 403, error: 'e-mail domain not allowed for single sign-on' },
  /** The callback's state is missing, not this browser's, used or expired. */
  sso_invalid_state: { status: 400, error: 'invalid or expired single sign-on state' },
  /** The provider refused the code, or its ID token failed a check (issuer, audience, nonce, signature). */
  sso_failed: { status: 400, error: 'single sign-on failed' },
  sso_unavailable: { status: 503, error: 'identity provider unavailable' },
  // --- gateway key rules (docs/teams.md#key-rules); a refused rate names its rule in `details` ---
  api_key_expired: { status: 401, error: 'api key expired' },
  key_lane_not_allowed: { status: 403, error: 'lane not allowed for this api key' },
  key_model_not_allowed: { status: 403, error: 'model not allowed for this api key' },
  // --- gateway teams (docs/teams.md) ---
  team_not_found: { status: 404, error: 'team not found' },
  team_member_not_found: { status: 404, error: 'team member not found' },
  invalid_invite: { status: 400, error: 'invalid or expired invite' },
  maximum_team_keys: { status: 400, error: 'maximum_team_keys' },
  provider_key_not_found: { status: 404, error: 'provider key not found' },
  unknown_provider: { status: 400, error: 'unknown provider' },

  // --- gateway AI (spec table) --------------------------------------------------
  messages_empty: { status: 400, error: 'messages cannot be empty' },
  message_too_long: { status: 400, error: 'message content exceeds maximum length' },
  total_content_too_long: { status: 400, error: 'total message content exceeds 8MB limit' },
  lane_required: { status: 400, error: 'lane is required' },
  project_id_required: { status: 400, error: 'project_id is required' },
  unknown_lane: { status: 400, error: 'unknown lane' },
  upstream_timeout: { status: 504, error: 'upstream AI service timed out' },
  // gateway AI (decided here, where the spec leaves the wording open)
  project_id_too_long: { status: 400, error: 'project_id exceeds 128 characters' },
  too_many_messages: { status: 400, error: 'messages exceeds 128 entries' },
  unknown_model: { status: 400, error: 'model is not offered by this lane' },
  upstream_error: { status: 502, error: 'upstream AI service error' },
  upstream_rejected: { status: 400, error: 'upstream AI service rejected the request' },
  upstream_unavailable: { status: 503, error: 'upstream AI service unavailable' },
  /** A provider's content policy refused the request; `details[0]` carries its reason code. */
  upstream_content_policy: { status: 400, error: 'upstream AI service refused the content' },
  /** The prompt is longer than the context window of every target of the lane. */
  upstream_context_length: { status: 400, error: 'prompt exceeds the context window of every target' },
  /**
   * The request needs more than a budget's whole window holds (its prompt, or
   * a media request's cost): a retry cannot help, so unlike a spent budget's
   * 429 it carries no Retry-After; `details` names the budget.
   */
  request_exceeds_budget: { status: 400, error: 'request exceeds budget' },
  /** A paid lane (lanes config `billing.mode: paid`) and the user has no active subscription to its product. */
  subscription_required: { status: 402, error: 'subscription required' },

  // --- payment ------------------------------------------------------------------
  price_not_found: { status: 400, error: 'price not found' },
  price_not_recurring: { status: 400, error: 'price is not recurring' },
  price_product_mismatch: { status: 400, error: 'price does not belong to product' },
  redirect_host_not_allowed: { status: 400, error: 'redirect host not allowed' },
  customer_not_found: { status: 404, error: 'customer not found' },
  stripe_invalid_request: { status: 400, error: 'stripe invalid request' },
  /** Stripe card error: the issue maps card errors to 502/503, never 4xx, since the caller cannot fix them here. */
  stripe_card_error: { status: 502, error: 'stripe card error' },
  stripe_rate_limited: { status: 503, error: 'stripe rate limited' },
  stripe_unavailable: { status: 502, error: 'stripe unavailable' },
  webhook_signature_invalid: { status: 400, error: 'invalid webhook signature' },
  idempotency_conflict: { status: 409, error: 'idempotency key reused with different parameters' },
  /** A subscription checkout for a product the user already has an active, trialing or past_due subscription to. */
  subscription_exists: { status: 409, error: 'an active subscription to this product already exists' },

  // --- gateway AI ranges (contract's checkChatRules) ------------------------------
  /** max_tokens above the largest context window offered (CHAT_LIMITS.maxMaxTokens). */
  max_tokens_too_large: { status: 400, error: 'max_tokens exceeds 131072' },
  /** temperature outside 0..2, the range every offered provider accepts. */
  temperature_out_of_range: { status: 400, error: 'temperature must be between 0 and 2' },

  // --- gateway OpenAI-compatible API (/v1) -----------------------------------------
  /** `model` names no allowed lane, or a model its lane does not offer (OpenAI's answer to an unknown model). */
  model_not_found: { status: 404, error: 'model not found' },
  /** A request field the endpoint does not know, or that no target of the lane accepts. */
  unsupported_parameter: { status: 400, error: 'unsupported parameter' },

  // --- gateway MCP servers (docs/mcp.md) ----------------------------------------
  mcp_server_not_found: { status: 404, error: 'mcp server not found' },
  /** The name is taken by an operator's server or one of the caller's. */
  mcp_server_exists: { status: 409, error: 'mcp server already exists' },
  /** The URL resolves to an address the gateway does not call for users (loopback, private, link-local). */
  mcp_url_forbidden: { status: 400, error: 'mcp server url is not allowed' },
  /** Registration checks the server (initialize, tools/list); it did not answer as an MCP server. */
  mcp_server_unreachable: { status: 422, error: 'mcp server did not answer' },
} as const satisfies Record<string, { status: number; error: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}
