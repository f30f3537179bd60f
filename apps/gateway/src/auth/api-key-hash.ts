import { createHmac, randomBytes } from 'node:crypto';

/** Every key starts with this, so leaked keys are easy to recognise (secret scanners, logs). */
export const API_KEY_PREFIX = 'gw_';
/** Characters of the plaintext shown in listings: `gw_` plus 9 base62 characters (~53 bits). */
export const API_KEY_DISPLAY_LENGTH = 12;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 62^43 > 2^256, so 43 characters hold 32 random bytes exactly. */
const BODY_LENGTH = 43;

/** A freshly generated key: the plaintext (shown once) and what is stored. */
export type GeneratedApiKey = { key: string; prefix: string };

function encodeBase62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(BODY_LENGTH, '0');
}

/** `gw_` + base62 of 32 CSPRNG bytes: 256 bits, URL- and shell-safe, double-click selectable. */
export function generateApiKey(): GeneratedApiKey {
  const key = API_KEY_PREFIX + encodeBase62(randomBytes(32));
  return { key, prefix: displayPrefixOf(key) };
}

export function displayPrefixOf(key: string): string {
  return key.slice(0, API_KEY_DISPLAY_LENGTH);
}

/**
 * HMAC-SHA256 of the key under the server pepper (GATEWAY_SECRET), hex.
 * A plain SHA-256 would already resist guessing for 256-bit keys; the pepper
 * means a leaked database alone cannot even confirm a key seen elsewhere.
 */
export function hashApiKey(key: string, pepper: string): string {
  return createHmac('sha256', pepper).update(key, 'utf8').digest('hex');
}
