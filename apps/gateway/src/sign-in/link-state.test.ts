import { readLinkState, signLinkState } from './link-state';

const SECRET = 'link-state-secret-0123456789abcdef';
const now = new Date('2026-11-22T10:00:00Z');

describe('magic-link state', () => {
  it('round-trips redirect_url for the same code', async () => {
    const state = await signLinkState(SECRET, {
      redirectUrl: 'https://app.test/x',
      codeHash: 'h1',
      now,
      ttlSeconds: 900,
    });
    expect(await readLinkState(SECRET, state, { codeHash: 'h1', now })).toBe('https://app.test/x');
  });

  it('is refused for another code, another secret, after expiry, or when altered', async () => {
    const state = await signLinkState(SECRET, {
      redirectUrl: 'https://app.test/x',
      codeHash: 'h1',
      now,
      ttlSeconds: 900,
    });
    expect(await readLinkState(SECRET, state, { codeHash: 'h2', now })).toBeUndefined();
    expect(await readLinkState(`${SECRET}-other`, state, { codeHash: 'h1', now })).toBeUndefined();
    const later = new Date(now.getTime() + 901_000);
    expect(await readLinkState(SECRET, state, { codeHash: 'h1', now: later })).toBeUndefined();
    const [head, body, sig] = state.split('.');
    const altered = `${head}.${body?.slice(0, -2)}AA.${sig}`;
    expect(await readLinkState(SECRET, altered, { codeHash: 'h1', now })).toBeUndefined();
    expect(await readLinkState(SECRET, 'not-a-jwt', { codeHash: 'h1', now })).toBeUndefined();
  });
});
