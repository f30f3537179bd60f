import { validate } from '@readme/openapi-parser';
import { buildGatewayOpenApi, buildPaymentOpenApi } from '../src/openapi';

type Doc = ReturnType<typeof buildPaymentOpenApi>;

// Every path and method the two specs list, plus the ones the issues added.
const PAYMENT_OPERATIONS = [
  'get /health',
  'get /health/ready',
  'get /openapi.json',
  'get /metrics',
  'post /api/v1/checkout/subscription',
  'post /api/v1/checkout/item',
  'post /api/v1/checkout/cart',
  'get /api/v1/subscriptions/{user_id}/{product_id}',
  'post /api/v1/portal',
  'get /api/v1/purchases/{user_id}',
  'get /api/v1/entitlements/{user_id}',
  'post /api/v1/sync/{user_id}',
  'post /webhooks/stripe',
  // Usage billing (issue 25, docs/billing.md).
  'post /api/v1/usage-events',
  'get /api/v1/usage-events/error-reports',
  'get /api/v1/usage-events/refused',
  'get /api/v1/usage-events/billable/{user_id}',
  'post /webhooks/stripe/events',
];
const GATEWAY_OPERATIONS = [
  'get /health',
  'get /health/ready',
  'get /openapi.json',
  'get /metrics',
  'post /api/v1/ai/chat/completions',
  'post /api/v1/ai/chat/stream',
  'post /api/v1/ai/image',
  'post /api/v1/ai/music',
  'post /api/v1/ai/soundfx',
  'post /api/v1/ai/tts',
  'post /api/v1/keys',
  'get /api/v1/keys',
  'delete /api/v1/keys/{provider}',
  'post /api/v1/auth/request-magic-link',
  'get /api/v1/auth/magic-link',
  'post /api/v1/auth/verify-code',
  'get /api/v1/auth/session',
  'post /api/v1/auth/logout',
  'get /api/v1/me',
  'post /api/v1/auth/api-keys',
  'get /api/v1/auth/api-keys/list',
  'post /api/v1/auth/api-keys/revoke',
  'post /api/v1/auth/api-keys/rules',
  'get /api/v1/usage',
  'get /api/v1/usage/today',
  // Beyond the spec (issue 31, docs/usage-and-budgets.md): the ledger feed and budgets.
  'get /api/v1/usage/records',
  'get /api/v1/usage/feed',
  'get /api/v1/budgets',
  'put /api/v1/budgets',
  'delete /api/v1/budgets',
  // Beyond the spec (issue 43, docs/observability.md): the request log and project capture settings.
  'get /api/v1/request-log',
  'get /api/v1/request-log/{request_id}',
  'get /api/v1/project-settings',
  'put /api/v1/project-settings',
  // Beyond the spec (issue 41, docs/mcp.md): MCP servers and tool policies.
  'get /api/v1/mcp/servers',
  'post /api/v1/mcp/servers',
  'delete /api/v1/mcp/servers/{name}',
  'get /api/v1/mcp/servers/{name}/tools',
  'get /api/v1/mcp/policies',
  'put /api/v1/mcp/policies',
  'delete /api/v1/mcp/policies',
  // Beyond the spec (issue 25, docs/billing.md): payment's subscription notices.
  'post /api/v1/billing/subscription-changes',
  'get /api/v1/config',
  // Beyond the spec (issue 42, docs/teams.md#single-sign-on): OpenID Connect sign-in.
  'get /api/v1/auth/sso/start',
  'get /api/v1/auth/sso/callback',
  // Beyond the spec (issue 42, docs/teams.md): teams and their keys, budgets and audit log.
  'post /api/v1/teams',
  'get /api/v1/teams',
  'post /api/v1/teams/invites/accept',
  ...[
    'get members',
    'post invites',
    'post members/role',
    'post members/remove',
    'post leave',
    'post transfer',
    'get api-keys',
    'post api-keys',
    'post api-keys/revoke',
    'post api-keys/rules',
    'get budgets',
    'put budgets',
    'delete budgets',
    'get usage',
    'get provider-keys',
    'post provider-keys',
    'delete provider-keys/{provider}',
    'get audit',
    // Issue 43 (docs/observability.md): the team's request log and capture settings.
    'get request-log',
    'get request-log/{id}',
    'get project-settings',
    'put project-settings',
  ].map((op) => op.replace(' ', ' /api/v1/teams/{teamId}/')),
  'post /v1/chat/completions',
  'post /v1/messages',
  'post /v1/messages/count_tokens',
  'post /v1/responses',
  'post /v1/embeddings',
  'get /v1/models',
  'get /v1/models/{model}',
];

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function operationsOf(doc: Doc): string[] {
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m] !== undefined).map((m) => `${m} ${path}`),
  );
}

function operation(doc: Doc, key: string) {
  const [method, path] = key.split(' ') as [(typeof METHODS)[number], string];
  const op = doc.paths?.[path]?.[method];
  if (!op) throw new Error(`missing ${key}`);
  return op;
}

function exampleErrors(doc: Doc, key: string, status: string): string[] {
  const response = operation(doc, key).responses[status] as {
    content?: Record<string, { examples?: Record<string, { value: { error: string } }> }>;
  };
  return Object.values(response?.content?.['application/json']?.examples ?? {}).map((e) => e.value.error);
}

describe.each([
  ['payment', buildPaymentOpenApi, PAYMENT_OPERATIONS],
  ['gateway', buildGatewayOpenApi, GATEWAY_OPERATIONS],
] as const)('%s OpenAPI document', (_name, build, expected) => {
  it('is a valid OpenAPI 3.0.3 document', async () => {
    const doc = build();
    expect(doc.openapi).toBe('3.0.3');
    await expect(validate(structuredClone(doc) as never)).resolves.toMatchObject({ valid: true });
  });

  it('documents exactly the operations of the spec', () => {
    expect(operationsOf(build()).sort()).toEqual([...expected].sort());
  });

  it('is deterministic and uses the given server URL', () => {
    expect(JSON.stringify(build())).toBe(JSON.stringify(build()));
    expect(build({ serverUrl: 'https://api.example.com' }).servers).toEqual([
      { url: 'https://api.example.com' },
    ]);
    expect(build().servers).toEqual([{ url: '/' }]);
  });

  it('answers every error status of every operation with ErrorBody (OpenAiErrorBody under /v1, AnthropicError for /v1/messages*)', () => {
    const doc = build();
    for (const key of expected) {
      const body = key.includes(' /v1/messages')
        ? 'AnthropicError'
        : key.includes(' /v1/')
          ? 'OpenAiErrorBody'
          : 'ErrorBody';
      for (const [status, response] of Object.entries(operation(doc, key).responses)) {
        if (Number(status) < 400) continue;
        const schema = (response as { content?: Record<string, { schema?: unknown }> }).content?.[
          'application/json'
        ]?.schema;
        expect({ key, status, schema }).toEqual({
          key,
          status,
          schema: { $ref: `#/components/schemas/${body}` },
        });
      }
    }
  });
});

describe('payment document', () => {
  const doc = buildPaymentOpenApi();
  const api = PAYMENT_OPERATIONS.filter((k) => k.includes(' /api/v1/'));

  it('protects every /api/v1 operation with the X-API-Key scheme and nothing else', () => {
    expect(doc.components?.securitySchemes?.ApiKeyAuth).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    );
    for (const key of PAYMENT_OPERATIONS) {
      expect({ key, security: operation(doc, key).security }).toEqual({
        key,
        security: api.includes(key) ? [{ ApiKeyAuth: [] }] : undefined,
      });
    }
  });

  it('documents 401, 400, 404, 429, 500, 502 and 503 everywhere, and 409, 413 and 422 on JSON bodies', () => {
    // The usage operations never call Stripe in the request (no 502/409) and have no resource to miss (404).
    for (const key of api.filter((k) => !k.includes('/usage-events'))) {
      const statuses = Object.keys(operation(doc, key).responses);
      // GET /api/v1/purchases/{user_id} reads the database only: no Stripe call, no 502.
      const upstream = key.includes('/purchases/') ? [] : ['502'];
      expect(statuses).toEqual(
        expect.arrayContaining(['400', '401', '404', '429', '500', '503', ...upstream]),
      );
      // POST /api/v1/sync/{user_id} takes no body.
      if (key.startsWith('post') && !key.includes('/sync/'))
        expect(statuses).toEqual(expect.arrayContaining(['409', '413', '422']));
    }
  });

  it('documents the optional Idempotency-Key header on checkout and portal', () => {
    const header = operation(doc, 'post /api/v1/checkout/cart').parameters?.find(
      (p) => 'name' in p && p.name === 'Idempotency-Key',
    );
    expect(header).toMatchObject({ in: 'header', required: false, schema: { minLength: 1, maxLength: 255 } });
  });

  it('documents the Stripe webhook with its signature header and acknowledgement', () => {
    const op = operation(doc, 'post /webhooks/stripe');
    expect(op.parameters).toEqual([
      expect.objectContaining({ name: 'Stripe-Signature', in: 'header', required: true }),
    ]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400']));
    expect(exampleErrors(doc, 'post /webhooks/stripe', '400')).toEqual(['invalid webhook signature']);
  });
});

describe('gateway document', () => {
  const doc = buildGatewayOpenApi();

  it('declares the session cookie, the x-api-key header and the bearer schemes', () => {
    expect(doc.components?.securitySchemes).toEqual({
      SessionCookie: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'gw_session' }),
      ApiKeyAuth: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key' }),
      BearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      ServiceToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
  });

  it('the usage feed for services takes the service token only', () => {
    expect(operation(doc, 'get /api/v1/usage/feed').security).toEqual([{ ServiceToken: [] }]);
  });

  it('documents the OpenAI-compatible API with OpenAI-shaped errors, bearer or x-api-key', () => {
    const key = 'post /v1/chat/completions';
    expect(operation(doc, key).security).toEqual([{ BearerAuth: [] }, { ApiKeyAuth: [] }]);
    expect(Object.keys(operation(doc, key).responses['200']?.content ?? {})).toEqual([
      'application/json',
      'text/event-stream',
    ]);
    const notFound = operation(doc, key).responses['404'] as {
      content: Record<string, { examples: Record<string, { value: unknown }> }>;
    };
    expect(notFound.content['application/json']?.examples.model_not_found?.value).toEqual({
      error: {
        message: 'The model `gpt-4o` does not exist or you do not have access to it.',
        type: 'invalid_request_error',
        param: null,
        code: 'model_not_found',
      },
    });
    expect(Object.keys(operation(doc, key).responses)).toEqual(
      expect.arrayContaining(['400', '401', '404', '413', '422', '429', '502', '503', '504']),
    );
    for (const id of [
      'OpenAiChatRequest',
      'OpenAiChatCompletion',
      'OpenAiChatCompletionChunk',
      'OpenAiModelList',
    ]) {
      expect(doc.components?.schemas?.[id]).toBeDefined();
    }
  });

  it('lists every error string of the spec table on chat completions', () => {
    const key = 'post /api/v1/ai/chat/completions';
    expect(exampleErrors(doc, key, '401')).toEqual(['missing api key', 'invalid api key']);
    expect(exampleErrors(doc, key, '400')).toEqual(
      expect.arrayContaining([
        'messages cannot be empty',
        'message content exceeds maximum length',
        'total message content exceeds 8MB limit',
        'lane is required',
        'project_id is required',
        'unknown lane',
      ]),
    );
    expect(exampleErrors(doc, key, '422')).toEqual(['deserialization error']);
    expect(exampleErrors(doc, key, '429')).toEqual(['rate_limited']);
    expect(exampleErrors(doc, key, '504')).toEqual(['upstream AI service timed out']);
  });

  it('lists the sign-in and key-management errors of the spec table', () => {
    expect(exampleErrors(doc, 'post /api/v1/auth/api-keys', '400')).toContain('maximum_keys');
    expect(exampleErrors(doc, 'post /api/v1/auth/api-keys', '403')).toEqual(['csrf_origin']);
    expect(exampleErrors(doc, 'post /api/v1/auth/api-keys/revoke', '403')).toEqual(['csrf_origin']);
    expect(exampleErrors(doc, 'get /api/v1/me', '401')).toEqual([
      'missing_authentication',
      'invalid api key',
    ]);
  });

  it('documents the stream events as components and in the stream description', () => {
    for (const id of ['StreamChunkEvent', 'StreamDoneEvent', 'StreamErrorEvent']) {
      expect(doc.components?.schemas?.[id]).toBeDefined();
      expect(operation(doc, 'post /api/v1/ai/chat/stream').description).toContain(id);
    }
    expect(
      Object.keys(operation(doc, 'post /api/v1/ai/chat/stream').responses['200']?.content ?? {}),
    ).toEqual(['text/event-stream']);
  });

  it('returns the stored provider keys as a bare array and deletes with 204', () => {
    const list = operation(doc, 'get /api/v1/keys').responses['200'] as {
      content: Record<string, { schema: unknown }>;
    };
    expect(list.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/ListProviderKeysResponse',
    });
    expect(doc.components?.schemas?.ListProviderKeysResponse).toMatchObject({ type: 'array' });
    expect(operation(doc, 'delete /api/v1/keys/{provider}').responses['204']).toBeDefined();
  });

  it('protects the AI endpoints with x-api-key only', () => {
    for (const key of GATEWAY_OPERATIONS.filter((k) => k.includes('/api/v1/ai/'))) {
      expect(operation(doc, key).security).toEqual([{ ApiKeyAuth: [] }]);
    }
  });
});
