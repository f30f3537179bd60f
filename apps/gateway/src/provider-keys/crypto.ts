import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** The master keys from PROVIDER_KEYS_MASTER_KEYS: the first encrypts, all decrypt. */
export type MasterKeyRing = {
  current: { id: string; key: Buffer };
  byId: ReadonlyMap<string, Buffer>;
};

/** One encrypted provider key as stored (AES-256-GCM). */
export type SealedKey = { masterKeyId: string; iv: Uint8Array; ciphertext: Uint8Array; authTag: Uint8Array };

const IV_BYTES = 12;
const KEY_BYTES = 32;

/**
 * Parses `id:base64` entries. Ids are short names (`2026-11`, `k2`) stored on
 * every row, so a row written under an old key is still readable after a new
 * key was put in front of the list.
 */
export function parseMasterKeys(entries: readonly string[]): MasterKeyRing {
  const byId = new Map<string, Buffer>();
  for (const [index, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon) : '';
    if (!/^[A-Za-z0-9._-]{1,32}$/.test(id)) {
      throw new Error(`PROVIDER_KEYS_MASTER_KEYS entry ${index + 1}: expected id:base64 with a short id`);
    }
    const key = Buffer.from(entry.slice(colon + 1), 'base64');
    if (key.length !== KEY_BYTES) {
      throw new Error(`PROVIDER_KEYS_MASTER_KEYS entry ${index + 1} (${id}): key must be ${KEY_BYTES} bytes`);
    }
    if (byId.has(id)) throw new Error(`PROVIDER_KEYS_MASTER_KEYS: duplicate id ${id}`);
    byId.set(id, key);
  }
  // Map iteration follows insertion order, so the first entry is the current key.
  const first = byId.entries().next().value;
  if (!first) throw new Error('PROVIDER_KEYS_MASTER_KEYS: no master key');
  return { current: { id: first[0], key: first[1] }, byId };
}

/**
 * The row's owner and provider are bound in as associated data, so a
 * ciphertext copied onto another user's row fails to decrypt.
 */
function associatedData(userId: string, provider: string): Buffer {
  return Buffer.from(`${userId}\n${provider}`, 'utf8');
}

export function sealKey(
  ring: MasterKeyRing,
  plaintext: string,
  owner: { userId: string; provider: string },
): SealedKey {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', ring.current.key, iv);
  cipher.setAAD(associatedData(owner.userId, owner.provider));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { masterKeyId: ring.current.id, iv, ciphertext, authTag: cipher.getAuthTag() };
}

/** Decrypts a stored key; throws when its master key is gone or the row was tampered with. */
export function openKey(
  ring: MasterKeyRing,
  sealed: SealedKey,
  owner: { userId: string; provider: string },
): string {
  const key = ring.byId.get(sealed.masterKeyId);
  if (!key) throw new Error(`master key ${sealed.masterKeyId} is not configured`);
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
  decipher.setAAD(associatedData(owner.userId, owner.provider));
  decipher.setAuthTag(sealed.authTag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
}
