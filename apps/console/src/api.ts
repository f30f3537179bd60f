import type {
  AcceptTeamInviteResponse,
  ApiKeySummary,
  Budget,
  CreateApiKeyRequest,
  CreateApiKeyResponse,
  ErrorBody,
  GatewayConfigResponse,
  ListApiKeysResponse,
  ListBudgetsResponse,
  ListMcpPoliciesResponse,
  ListMcpServersResponse,
  ListMcpToolsResponse,
  ListProjectSettingsResponse,
  ListProviderKeysResponse,
  LogoutResponse,
  McpPolicyView,
  ProjectSettings,
  RegisterMcpServerRequest,
  RegisterMcpServerResponse,
  RequestLogDetail,
  RequestLogResponse,
  RequestMagicLinkRequest,
  RequestMagicLinkResponse,
  RevokeApiKeyRequest,
  RevokeApiKeyResponse,
  SessionResponse,
  SetBudgetRequest,
  SetMcpPolicyRequest,
  SetProjectSettingsRequest,
  StoredProviderKey,
  StoreProviderKeyRequest,
  TeamAuditEvent,
  TeamBudgetsResponse,
  TeamInviteRequest,
  TeamInviteResponse,
  TeamMember,
  TeamMemberRoleRequest,
  TeamSummary,
  UpdateApiKeyRulesRequest,
  UpdateApiKeyRulesResponse,
  UsageResponse,
  UsageRow,
  UsageTodayResponse,
  VerifyCodeRequest,
  VerifyCodeResponse,
} from '@platform/contract';

/**
 * The gateway's API as the console uses it: same-origin fetch, so the
 * session cookie goes along and the browser adds the Origin header that the
 * gateway's CSRF check wants. Every shape comes from @platform/contract
 * (types only: nothing of zod reaches the bundle).
 */

/** Base of the API, relative to the page, so a path prefix in front of the gateway works. */
const API = new URL('api/v1/', document.baseURI);

/** An error answer of the gateway, or a network failure (status 0), put in words. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly retryAfter: number | undefined;
  constructor(status: number, body: Partial<ErrorBody>, retryAfter?: number) {
    const code = body.error ?? `HTTP ${status}`;
    const words = describeError(code, status, body, retryAfter);
    // A failure on the gateway's side is worth reporting; the request id finds it in the logs.
    super(status >= 500 && body.request_id ? `${words} (Request id: ${body.request_id})` : words);
    this.status = status;
    this.code = code;
    this.requestId = body.request_id;
    this.retryAfter = retryAfter;
  }
}

const WORDS: Record<string, string> = {
  maximum_keys: 'You already have 5 active API keys, the most allowed. Revoke one before you create another.',
  missing_authentication: 'You are not signed in (or the session ended). Sign in again.',
  csrf_origin: 'The gateway refused this request because of its origin (csrf_origin).',
  'invalid or expired code': 'This sign-in link is invalid, already used or expired. Request a new one.',
  'api key not found': 'That API key no longer exists.',
  'invalid api key': 'That API key is not valid: it is unknown or has been revoked.',
  'missing api key': 'Enter an API key first.',
  'unknown provider': 'The gateway does not know that provider.',
  'provider key not found': 'There is no stored key for that provider.',
  'unknown lane': 'The gateway does not offer that lane.',
  'lane is required': 'Choose a lane.',
  'project_id is required': 'Enter a project id.',
  'messages cannot be empty': 'Write a message first.',
  'message content exceeds maximum length': 'The message is too long (at most 64 KB).',
  'upstream AI service timed out': 'The AI provider did not answer in time. Try again in a moment.',
  'upstream AI service unavailable':
    'No AI provider of this lane could answer. The gateway may have no provider key for it: store your own under Provider keys, or ask the operator.',
  'upstream AI service error': 'The AI provider failed. Try again in a moment.',
  'upstream AI service rejected the request':
    'The AI provider refused this request (check the message and the lane).',
  'project_id exceeds 128 characters': 'The project id is too long (at most 128 characters).',
  'payload too large': 'That is too large to send.',
  forbidden: 'You are not allowed to do that.',
  'mcp server not found': 'There is no MCP server of that name.',
  'mcp server already exists': 'An MCP server of that name already exists. Choose another name.',
  'mcp server url is not allowed':
    'That address is on an internal network; the gateway does not call it for users (ask the operator to allow it).',
  'mcp server did not answer':
    'The server did not answer as an MCP server (initialize and tools/list). Check the URL, the transport and the credential.',
  'redirect_url is not allowed': 'The sign-in link cannot send you to that address.',
  'team not found': 'That team does not exist, or you are no longer one of its members.',
  'team member not found': 'That person is not a member of the team (any more).',
  'invalid or expired invite':
    'This invitation is invalid, already used, expired, or meant for another e-mail address than the one you signed in with.',
  maximum_team_keys: 'The team has as many active API keys as allowed. Revoke one before you create another.',
  'api key expired': 'That API key has expired.',
  'internal error': 'The gateway failed on its side. Try again; if it keeps failing, report the request id.',
};

function describeError(code: string, status: number, body: Partial<ErrorBody>, retryAfter?: number): string {
  if (status === 0) return 'The gateway could not be reached. Check that it is running and try again.';
  if (code === 'rate_limited') {
    return retryAfter
      ? `Too many requests. Try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`
      : 'Too many requests. Try again later.';
  }
  if (code === 'validation failed' || code === 'deserialization error') {
    const fields = (body.details ?? []).map((d) => `${d.path}: ${d.message}`).join('; ');
    return fields ? `Please check the form: ${fields}.` : 'Please check the form.';
  }
  const words = WORDS[code];
  if (words) return words;
  return `The gateway answered ${status}: ${code}.`;
}

async function errorOf(res: Response): Promise<ApiError> {
  let body: Partial<ErrorBody> = {};
  try {
    body = (await res.json()) as ErrorBody;
  } catch {
    // Not JSON (e.g. a proxy's page): the status alone has to do.
  }
  const retry = Number(res.headers.get('retry-after'));
  return new ApiError(res.status, body, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One call; resolves with the JSON body (undefined for 204) or throws ApiError. */
async function call<T>(method: Method, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(new URL(path, API), {
      method,
      credentials: 'same-origin',
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? null : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, {});
  }
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const api = {
  config: () => call<GatewayConfigResponse>('GET', 'config'),
  session: () => call<SessionResponse>('GET', 'auth/session'),
  requestLink: (body: RequestMagicLinkRequest) =>
    call<RequestMagicLinkResponse>('POST', 'auth/request-magic-link', body),
  verifyCode: (body: VerifyCodeRequest) => call<VerifyCodeResponse>('POST', 'auth/verify-code', body),
  logout: () => call<LogoutResponse>('POST', 'auth/logout'),
  listKeys: async (): Promise<ApiKeySummary[]> =>
    (await call<ListApiKeysResponse>('GET', 'auth/api-keys/list')).keys,
  createKey: (body: CreateApiKeyRequest) => call<CreateApiKeyResponse>('POST', 'auth/api-keys', body),
  revokeKey: (body: RevokeApiKeyRequest) => call<RevokeApiKeyResponse>('POST', 'auth/api-keys/revoke', body),
  listProviderKeys: () => call<ListProviderKeysResponse>('GET', 'keys'),
  storeProviderKey: (body: StoreProviderKeyRequest) => call<StoredProviderKey>('POST', 'keys', body),
  deleteProviderKey: (provider: string) => call<void>('DELETE', `keys/${encodeURIComponent(provider)}`),
  usage: (from: string, to: string) =>
    call<UsageResponse>('GET', `usage?from=${from}&to=${to}`).then((r) => r.usage),
  usageToday: () => call<UsageTodayResponse>('GET', 'usage/today'),
  listBudgets: () => call<ListBudgetsResponse>('GET', 'budgets'),
  setBudget: (body: SetBudgetRequest) => call<Budget>('PUT', 'budgets', body),
  listMcpServers: () => call<ListMcpServersResponse>('GET', 'mcp/servers').then((r) => r.servers),
  registerMcpServer: (body: RegisterMcpServerRequest) =>
    call<RegisterMcpServerResponse>('POST', 'mcp/servers', body),
  deleteMcpServer: (name: string) => call<void>('DELETE', `mcp/servers/${encodeURIComponent(name)}`),
  mcpServerTools: (name: string) =>
    call<ListMcpToolsResponse>('GET', `mcp/servers/${encodeURIComponent(name)}/tools`).then((r) => r.tools),
  listMcpPolicies: () => call<ListMcpPoliciesResponse>('GET', 'mcp/policies').then((r) => r.policies),
  setMcpPolicy: (body: SetMcpPolicyRequest) => call<McpPolicyView>('PUT', 'mcp/policies', body),
  deleteBudget: (b: Pick<Budget, 'scope' | 'subject' | 'period' | 'unit'>) =>
    call<void>('DELETE', `budgets?${new URLSearchParams(b).toString()}`),
  listTeams: () => call<{ teams: TeamSummary[] }>('GET', 'teams').then((r) => r.teams),
  createTeam: (name: string) => call<TeamSummary>('POST', 'teams', { name }),
  acceptInvite: (token: string) => call<AcceptTeamInviteResponse>('POST', 'teams/invites/accept', { token }),
  team: teamApi,
  /** `query`: the filters as URL parameters (RequestLogQuery), empty ones left out. */
  searchRequestLog: (query: URLSearchParams) =>
    call<RequestLogResponse>('GET', `request-log?${query.toString()}`),
  requestLogEntry: (id: string) => call<RequestLogDetail>('GET', `request-log/${encodeURIComponent(id)}`),
  listProjectSettings: () =>
    call<ListProjectSettingsResponse>('GET', 'project-settings').then((r) => r.projects),
  setProjectSettings: (body: SetProjectSettingsRequest) =>
    call<ProjectSettings>('PUT', 'project-settings', body),
};

/** The routes under one team (docs/teams.md); the same shapes as the personal ones where they match. */
function teamApi(teamId: string) {
  const at = (path: string) => `teams/${encodeURIComponent(teamId)}/${path}`;
  return {
    members: () => call<{ members: TeamMember[] }>('GET', at('members')).then((r) => r.members),
    invite: (body: TeamInviteRequest) => call<TeamInviteResponse>('POST', at('invites'), body),
    setRole: (body: TeamMemberRoleRequest) => call<unknown>('POST', at('members/role'), body),
    remove: (userId: string) => call<void>('POST', at('members/remove'), { user_id: userId }),
    leave: () => call<void>('POST', at('leave'), {}),
    transfer: (userId: string) => call<unknown>('POST', at('transfer'), { user_id: userId }),
    listKeys: () => call<ListApiKeysResponse>('GET', at('api-keys')).then((r) => r.keys),
    createKey: (body: CreateApiKeyRequest) => call<CreateApiKeyResponse>('POST', at('api-keys'), body),
    revokeKey: (body: RevokeApiKeyRequest) => call<RevokeApiKeyResponse>('POST', at('api-keys/revoke'), body),
    setRules: (body: UpdateApiKeyRulesRequest) =>
      call<UpdateApiKeyRulesResponse>('POST', at('api-keys/rules'), body),
    budgets: () => call<TeamBudgetsResponse>('GET', at('budgets')),
    setBudget: (body: SetBudgetRequest) => call<unknown>('PUT', at('budgets'), body),
    deleteBudget: (b: Pick<Budget, 'scope' | 'subject' | 'period' | 'unit'>) =>
      call<void>('DELETE', at(`budgets?${new URLSearchParams(b).toString()}`)),
    listProviderKeys: () => call<ListProviderKeysResponse>('GET', at('provider-keys')),
    storeProviderKey: (body: StoreProviderKeyRequest) =>
      call<StoredProviderKey>('POST', at('provider-keys'), body),
    deleteProviderKey: (provider: string) =>
      call<void>('DELETE', at(`provider-keys/${encodeURIComponent(provider)}`)),
    usage: (from: string, to: string) =>
      call<{ usage: UsageRow[] }>('GET', at(`usage?from=${from}&to=${to}`)).then((r) => r.usage),
    audit: () => call<{ events: TeamAuditEvent[] }>('GET', at('audit')).then((r) => r.events),
    searchRequestLog: (query: URLSearchParams) =>
      call<RequestLogResponse>('GET', at(`request-log?${query.toString()}`)),
    requestLogEntry: (id: string) =>
      call<RequestLogDetail>('GET', at(`request-log/${encodeURIComponent(id)}`)),
  };
}
export type TeamApi = ReturnType<typeof teamApi>;

/**
 * Where a request log is read: the personal routes (`api`) or a team's
 * (`api.team(id)`); both have these three under the same names.
 */
export type RequestLogApi = Pick<TeamApi, 'listKeys' | 'searchRequestLog' | 'requestLogEntry'>;

/** The URL a relative API path resolves to (the quick try streams with its own fetch). */
export function apiUrl(path: string): URL {
  return new URL(path, API);
}

export function errorWords(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
