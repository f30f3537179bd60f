import { randomBytes } from 'node:crypto';
import { openKey, parseMasterKeys, sealKey } from './crypto';

// Stored provider keys: sealed under the current master key, readable under
// any listed one, and bound to their owner and provider.

const keyOf = () => randomBytes(32).toString('base64');
const owner = { userId: 'u1', provider: 'groq' };

describe('master keys', () => {
  it('the first entry is the current key; every entry can decrypt', () => {
    const ring = parseMasterKeys([`k2:${keyOf()}`, `k1:${keyOf()}`]);
    expect(ring.current.id).toBe('k2');
    expect([...ring.byId.keys()]).toEqual(['k2', 'k1']);
  });

  it('refuses an entry without a short id, a key of the wrong size, a duplicate id, or none', () => {
    expect(() => parseMasterKeys([keyOf()])).toThrow('entry 1: expected id:base64 with a short id');
    expect(() => parseMasterKeys([`k1:${randomBytes(16).toString('base64')}`])).toThrow(
      'entry 1 (k1): key must be 32 bytes',
    );
    const key = keyOf();
    expect(() => parseMasterKeys([`k1:${key}`, `k1:${key}`])).toThrow('duplicate id k1');
    expect(() => parseMasterKeys([])).toThrow('no master key');
  });
});

describe('sealing a provider key', () => {
  it('opens to the same plaintext, never stores it, and uses a fresh IV each time', () => {
    const ring = parseMasterKeys([`k1:${keyOf()}`]);
    const sealed = sealKey(ring, 'sk-secret-value', owner);
    expect(sealed.masterKeyId).toBe('k1');
    expect(Buffer.from(sealed.ciphertext).toString('utf8')).not.toContain('sk-secret');
    expect(openKey(ring, sealed, owner)).toBe('sk-secret-value');
    expect(Buffer.from(sealKey(ring, 'sk-secret-value', owner).iv)).not.toEqual(Buffer.from(sealed.iv));
  });

  it('a row sealed under an old key opens after a new key is put in front', () => {
    const old = `k1:${keyOf()}`;
    const sealed = sealKey(parseMasterKeys([old]), 'sk-x', owner);
    const rotated = parseMasterKeys([`k2:${keyOf()}`, old]);
    expect(openKey(rotated, sealed, owner)).toBe('sk-x');
  });

  it("a ciphertext copied to another user's or provider's row does not open", () => {
    const ring = parseMasterKeys([`k1:${keyOf()}`]);
    const sealed = sealKey(ring, 'sk-x', owner);
    expect(() => openKey(ring, sealed, { userId: 'u2', provider: 'groq' })).toThrow();
    expect(() => openKey(ring, sealed, { userId: 'u1', provider: 'openai' })).toThrow();
  });

  it('a row whose master key is no longer configured says which', () => {
    const sealed = sealKey(parseMasterKeys([`gone:${keyOf()}`]), 'sk-x', owner);
    expect(() => openKey(parseMasterKeys([`k1:${keyOf()}`]), sealed, owner)).toThrow(
      'master key gone is not configured',
    );
  });
});
