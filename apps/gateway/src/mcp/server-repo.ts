import type { PrismaClient } from '../generated/prisma/client';
import { type MasterKeyRing, openKey, type SealedKey, sealKey } from '../provider-keys/crypto';
import type { McpServerConfig } from './config';

/** A user's registered server as stored: its credential headers sealed, never in clear. */
export type StoredMcpServer = {
  name: string;
  url: string;
  transport: 'streamable-http' | 'sse';
  createdAt: Date;
};

/** Bound into the ciphertext: a row copied to another user or name does not decrypt. */
const ownerOf = (userId: string, name: string) => ({ userId, provider: `mcp:${name}` });

function transportOf(value: string): 'streamable-http' | 'sse' {
  return value === 'sse' ? 'sse' : 'streamable-http';
}

export async function countUserServers(prisma: PrismaClient, userId: string): Promise<number> {
  return prisma.mcpServer.count({ where: { userId } });
}

/** False when the user already has a server of that name. */
export async function insertUserServer(
  prisma: PrismaClient,
  ring: MasterKeyRing | null,
  userId: string,
  server: { name: string; url: string; transport: string; headers: Record<string, string> },
): Promise<boolean> {
  const sealed: SealedKey | null =
    ring && Object.keys(server.headers).length > 0
      ? sealKey(ring, JSON.stringify(server.headers), ownerOf(userId, server.name))
      : null;
  const existing = await prisma.mcpServer.count({ where: { userId, name: server.name } });
  if (existing > 0) return false;
  await prisma.mcpServer.create({
    data: {
      userId,
      name: server.name,
      url: server.url,
      transport: server.transport,
      masterKeyId: sealed?.masterKeyId ?? null,
      iv: sealed ? Buffer.from(sealed.iv) : null,
      ciphertext: sealed ? Buffer.from(sealed.ciphertext) : null,
      authTag: sealed ? Buffer.from(sealed.authTag) : null,
    },
  });
  return true;
}

export async function deleteUserServer(prisma: PrismaClient, userId: string, name: string): Promise<boolean> {
  const { count } = await prisma.mcpServer.deleteMany({ where: { userId, name } });
  return count > 0;
}

/**
 * The user's servers as the MCP gateway uses them, credentials decrypted.
 * A row whose master key is gone is left out (logged by the caller's
 * `onUnreadable`), rather than failing every listing.
 */
export async function loadUserServers(
  prisma: PrismaClient,
  ring: MasterKeyRing | null,
  userId: string,
  onUnreadable: (name: string, err: unknown) => void,
): Promise<Array<McpServerConfig & { headerNames: string[] }>> {
  const rows = await prisma.mcpServer.findMany({ where: { userId }, orderBy: { name: 'asc' } });
  const servers: Array<McpServerConfig & { headerNames: string[] }> = [];
  for (const row of rows) {
    let headers: Record<string, string> = {};
    try {
      if (row.masterKeyId && row.iv && row.ciphertext && row.authTag) {
        if (!ring) throw new Error('PROVIDER_KEYS_MASTER_KEYS is not set');
        const sealed = {
          masterKeyId: row.masterKeyId,
          iv: row.iv,
          ciphertext: row.ciphertext,
          authTag: row.authTag,
        };
        headers = JSON.parse(openKey(ring, sealed, ownerOf(userId, row.name))) as Record<string, string>;
      }
    } catch (err) {
      onUnreadable(row.name, err);
      continue;
    }
    servers.push({
      name: row.name,
      url: row.url,
      transport: transportOf(row.transport),
      headers,
      headerNames: Object.keys(headers),
      price_per_call: 0,
      default_allowed: true,
      owner: userId,
    });
  }
  return servers;
}

export function listStoredServers(prisma: PrismaClient, userId: string): Promise<StoredMcpServer[]> {
  return prisma.mcpServer
    .findMany({
      where: { userId },
      orderBy: { name: 'asc' },
      select: { name: true, url: true, transport: true, createdAt: true },
    })
    .then((rows) => rows.map((r) => ({ ...r, transport: transportOf(r.transport) })));
}
