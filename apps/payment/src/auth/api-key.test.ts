import { createHash } from 'node:crypto';
import { fingerprintApiKey, matchesAnyKey } from './api-key';

const digest = (key: string) => createHash('sha256').update(key).digest();

describe('matchesAnyKey', () => {
  const keys = [digest('first-key-0123456789'), digest('second-key-0123456789')];

  it('accepts every configured key', () => {
    expect(matchesAnyKey('first-key-0123456789', keys)).toBe(true);
    expect(matchesAnyKey('second-key-0123456789', keys)).toBe(true);
  });

  it('refuses other keys, including prefixes and longer strings', () => {
    expect(matchesAnyKey('first-key-012345678', keys)).toBe(false);
    expect(matchesAnyKey('first-key-0123456789x', keys)).toBe(false);
    expect(matchesAnyKey('', keys)).toBe(false);
  });
});

describe('fingerprintApiKey', () => {
  it('is stable and does not contain the key', () => {
    expect(fingerprintApiKey('first-key-0123456789')).toBe(fingerprintApiKey('first-key-0123456789'));
    expect(fingerprintApiKey('first-key-0123456789')).not.toContain('first-key');
  });
});
