import { z } from 'zod';
import { ZIsoTimestamp } from './common';
import { ZProjectId } from './gateway-common';

/** An MCP server's name: the prefix of its tools' names (`<server>__<tool>`). */
export const ZMcpServerName = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/, 'lower-case letters, digits and dashes, at most 32');

/** `server`, `server/tool` or `server/prefix*`, by the server's own tool names. */
export const ZMcpPolicyEntry = z
  .string()
  .regex(
    /^[a-z0-9-]{1,32}(\/[A-Za-z0-9_.\-/]{1,128}\*?|\/\*)?$/,
    'must be server, server/tool or server/prefix*',
  );

export const ZMcpPolicyScope = z.enum(['api_key', 'project']);

/** Which policy: the API key's (`subject` = key id) or the project's (`subject` = project id). */
export const ZMcpPolicyId = z
  .object({ scope: ZMcpPolicyScope, subject: z.string().min(1).max(128) })
  .superRefine((p, ctx) => {
    if (p.scope === 'api_key' && !z.uuid().safeParse(p.subject).success)
      ctx.addIssue({ code: 'custom', path: ['subject'], message: 'must be an API key id' });
    if (p.scope === 'project' && !ZProjectId.safeParse(p.subject).success)
      ctx.addIssue({ code: 'custom', path: ['subject'], message: 'must be a project id' });
  })
  .meta({ id: 'McpPolicyId' });

/** `PUT /api/v1/mcp/policies`: sets (or replaces) the MCP policy of a key or a project. */
export const ZSetMcpPolicyRequest = z
  .object({
    scope: ZMcpPolicyScope,
    subject: z.string().min(1).max(128),
    allow: z
      .array(ZMcpPolicyEntry)
      .max(200)
      .nullable()
      .meta({ description: 'Null: the servers allowed by default. A list: only what it names.' }),
    deny: z.array(ZMcpPolicyEntry).max(200).default([]).meta({ description: 'Wins over allow.' }),
  })
  .superRefine((p, ctx) => {
    const id = ZMcpPolicyId.safeParse(p);
    if (!id.success)
      for (const issue of id.error.issues)
        ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  })
  .meta({ id: 'SetMcpPolicyRequest' });
export type SetMcpPolicyRequest = z.infer<typeof ZSetMcpPolicyRequest>;

export const ZMcpPolicy = z
  .object({
    scope: ZMcpPolicyScope,
    subject: z.string(),
    allow: z.array(z.string()).nullable(),
    deny: z.array(z.string()),
    updated_at: ZIsoTimestamp,
  })
  .meta({ id: 'McpPolicy' });
export type McpPolicyView = z.infer<typeof ZMcpPolicy>;

export const ZListMcpPoliciesResponse = z
  .object({ policies: z.array(ZMcpPolicy) })
  .meta({ id: 'ListMcpPoliciesResponse' });
export type ListMcpPoliciesResponse = z.infer<typeof ZListMcpPoliciesResponse>;

/** A server the caller's keys can be given: the operator's, or one the caller registered. */
export const ZMcpServerView = z
  .object({
    name: ZMcpServerName,
    transport: z.enum(['streamable-http', 'sse']),
    source: z.enum(['operator', 'user']),
    default_allowed: z.boolean(),
    price_per_call: z.number().meta({ description: 'In the gateway currency.' }),
    /** Set for the caller's own servers only; the operator's URLs are not shown. */
    url: z.string().optional(),
    /** Names of the credential headers; their values are never returned. */
    credential_headers: z.array(z.string()),
  })
  .meta({ id: 'McpServer' });
export type McpServerView = z.infer<typeof ZMcpServerView>;

export const ZListMcpServersResponse = z
  .object({ servers: z.array(ZMcpServerView) })
  .meta({ id: 'ListMcpServersResponse' });
export type ListMcpServersResponse = z.infer<typeof ZListMcpServersResponse>;

export const ZMcpToolView = z
  .object({
    name: z.string().meta({ description: "The server's own name." }),
    exposed_name: z.string().meta({ description: 'The name MCP clients see: <server>__<tool>, at most 64.' }),
    description: z.string().optional(),
  })
  .meta({ id: 'McpTool' });

export const ZListMcpToolsResponse = z
  .object({ server: ZMcpServerName, tools: z.array(ZMcpToolView) })
  .meta({ id: 'ListMcpToolsResponse' });
export type ListMcpToolsResponse = z.infer<typeof ZListMcpToolsResponse>;

/** `POST /api/v1/mcp/servers`: registers a remote MCP server (never a command). */
export const ZRegisterMcpServerRequest = z
  .object({
    name: ZMcpServerName,
    url: z.url({ protocol: /^https?$/ }).max(2048),
    transport: z.enum(['streamable-http', 'sse']).default('streamable-http'),
    headers: z
      .record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().min(1).max(8192))
      .default({})
      .refine((h) => Object.keys(h).length <= 10, 'at most 10 headers')
      .meta({
        description:
          'Static credentials the gateway adds to every request; stored encrypted, never returned.',
      }),
  })
  .strict()
  .meta({ id: 'RegisterMcpServerRequest' });
export type RegisterMcpServerRequest = z.infer<typeof ZRegisterMcpServerRequest>;

export const ZRegisterMcpServerResponse = z
  .object({ server: ZMcpServerView, tools: z.array(ZMcpToolView) })
  .meta({ id: 'RegisterMcpServerResponse' });
export type RegisterMcpServerResponse = z.infer<typeof ZRegisterMcpServerResponse>;
