import type { ApiKeyRules } from '@platform/contract';

/** Who made the request, as set on `res.locals.auth` by the auth middleware. */
export type AuthContext =
  | {
      kind: 'api_key';
      userId: string;
      apiKeyId: string;
      scope: string;
      /** The key's rules (docs/teams.md#key-rules); absent: none. */
      rules?: ApiKeyRules | undefined;
      /** When the key expires (ms since the epoch); absent: never. */
      expiresAt?: number | undefined;
    }
  | {
      kind: 'session';
      userId: string;
      sessionId: string;
      email: string;
      createdAt: Date;
      expiresAt: Date;
    };

export type ApiKeyAuthContext = Extract<AuthContext, { kind: 'api_key' }>;
export type SessionAuthContext = Extract<AuthContext, { kind: 'session' }>;

/** Reads the auth context the middleware left on `res.locals`. */
export function authOf(res: { locals: Record<string, unknown> }): AuthContext | undefined {
  return res.locals.auth as AuthContext | undefined;
}
