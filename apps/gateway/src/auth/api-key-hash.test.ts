import { API_KEY_DISPLAY_LENGTH, displayPrefixOf, generateApiKey, hashApiKey } from './api-key-hash';

describe('api key format and hashing', () => {
  it('generates gw_ keys of 46 base62 characters with a 12-character display prefix', () => {
    const { key, prefix } = generateApiKey();
    expect(key).toMatch(/^gw_[0-9A-Za-z]{43}$/);
    expect(prefix).toHaveLength(API_KEY_DISPLAY_LENGTH);
    expect(key.startsWith(prefix)).toBe(true);
    expect(displayPrefixOf(key)).toBe(prefix);
  });

  it('never repeats a key across many generations', () => {
    const keys = new Set(Array.from({ length: 2000 }, () => generateApiKey().key));
    expect(keys.size).toBe(2000);
  });

  it('hashes with the pepper: same key and pepper agree, another pepper differs, no plaintext inside', () => {
    const { key } = generateApiKey();
    const a = hashApiKey(key, 'p'.repeat(32));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key, 'p'.repeat(32))).toBe(a);
    expect(hashApiKey(key, 'q'.repeat(32))).not.toBe(a);
    expect(a).not.toContain(key.slice(3, 12));
  });
});
