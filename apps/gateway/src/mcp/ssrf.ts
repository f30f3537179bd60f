import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { Agent, RequestInit as UndiciInit } from 'undici';

/**
 * Addresses a user-registered MCP server may not have: the gateway's own
 * host and networks (loopback, private, link-local with the cloud metadata
 * address, CGNAT, unique-local, multicast, unspecified). Registering
 * http://169.254.169.254/ or http://redis:6379/ must not make the gateway
 * call them. The operator's own servers (MCP_CONFIG) are not checked.
 */
const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv6');
}

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged as its IPv4 address. */
function plain(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return { address: mapped[1], family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

export function isInternalAddress(address: string): boolean {
  const a = plain(address);
  return INTERNAL.check(a.address, a.family);
}

/** Who may be called: an address outside the internal ranges, or a host or address the operator allowlisted. */
export type HostPolicy = { allowedHosts: readonly string[] };

export function hostAllowed(policy: HostPolicy, host: string, address: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (policy.allowedHosts.includes(bare) || policy.allowedHosts.includes(plain(address).address)) return true;
  return !isInternalAddress(address);
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for the sockets to user-registered servers: resolves, then
 * refuses an internal address at connect time, so a name that resolved to a
 * public address at registration and to an internal one later (DNS
 * rebinding) is still refused.
 */
export function guardedLookup(policy: HostPolicy) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const bad = addresses.find((a) => !hostAllowed(policy, hostname, a.address));
      if (bad) {
        const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to an internal address`);
        refused.code = 'EMCPHOSTREFUSED';
        return callback(refused, []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/** Resolves the URL's host and says whether a user may register it. */
export async function checkUserServerUrl(policy: HostPolicy, url: string): Promise<boolean> {
  const host = new URL(url).hostname;
  const lookup = guardedLookup(policy);
  return new Promise((resolve) => {
    lookup(host, { all: true }, (err) => resolve(err === null));
  });
}

/** What the MCP SDK's transports accept as `fetch`. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * fetch for user-registered servers: an address literal is checked here (a
 * socket to an IP never calls `lookup`), a name at connect time.
 */
export function guardedFetch(policy: HostPolicy): FetchLike {
  // undici's index (fetch and the rest) loads with the first call: most workers never reach a user's MCP server.
  let dispatcher: Agent | undefined;
  return async (url, init) => {
    const undici = require('undici') as typeof import('undici');
    dispatcher ??= new undici.Agent({ connect: { lookup: guardedLookup(policy) } });
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !hostAllowed(policy, host, host)) {
      throw new Error(`${host} is an internal address`);
    }
    const response = await undici.fetch(url, { ...(init as UndiciInit), dispatcher });
    return response as unknown as Response;
  };
}
