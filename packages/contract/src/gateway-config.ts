import { z } from 'zod';

/** How sign-in mail leaves the gateway: `log` means no SMTP_URL (development only). */
export const MAIL_DELIVERIES = ['smtp', 'log'] as const;

/**
 * `GET /api/v1/config`: the public, non-secret settings a sign-in page needs,
 * e.g. whether the link goes out by mail or into the gateway's output.
 */
export const ZGatewayConfigResponse = z
  .object({
    mail_delivery: z.enum(MAIL_DELIVERIES).meta({
      description:
        '`smtp`: links are mailed. `log`: SMTP_URL is unset (development), so each link is written to the gateway\u2019s standard error instead.',
    }),
    magic_link_ttl_minutes: z.number().int().positive(),
    lanes: z.array(z.string()).meta({ description: 'Lanes a chat request may name (AI_ALLOWED_LANES).' }),
    max_api_keys: z.number().int().positive().meta({ description: 'Active API keys a user may hold.' }),
    sso: z.boolean().meta({
      description:
        'Whether single sign-on is configured (OIDC_ISSUER): the sign-in page then offers `GET /api/v1/auth/sso/start`.',
    }),
    session_cookie: z.boolean().meta({
      description:
        'Whether this request carried a session cookie (not whether it is still valid). The console asks `GET /api/v1/auth/session` only when true, so a signed-out visit makes no request that answers 401.',
    }),
    providers: z
      .array(
        z.object({
          provider: z.string().meta({ example: 'openai' }),
          label: z.string().meta({ example: 'OpenAI' }),
        }),
      )
      .meta({
        description:
          "Providers a key may be stored for (bring your own key): the built-in ones, then those the gateway's lanes config adds, with display names.",
      }),
  })
  .meta({ id: 'GatewayConfigResponse' });
export type GatewayConfigResponse = z.infer<typeof ZGatewayConfigResponse>;
