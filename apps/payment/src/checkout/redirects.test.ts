import { AppError } from '@platform/errors';
import { assertRedirectsAllowed, isHostAllowed } from './redirects';

describe('isHostAllowed', () => {
  it('matches host names case-insensitively on any port', () => {
    expect(isHostAllowed('https://App.Example.com:8443/x', ['app.example.com'])).toBe(true);
    expect(isHostAllowed('https://app.example.com.evil.net/x', ['app.example.com'])).toBe(false);
  });

  it('an entry with a port matches only that port', () => {
    expect(isHostAllowed('http://localhost:3000/', ['localhost:3000'])).toBe(true);
    expect(isHostAllowed('http://localhost:4000/', ['localhost:3000'])).toBe(false);
  });

  it('a wildcard matches subdomains, not the apex or look-alikes', () => {
    expect(isHostAllowed('https://eu.shop.example/', ['*.shop.example'])).toBe(true);
    expect(isHostAllowed('https://shop.example/', ['*.shop.example'])).toBe(false);
    expect(isHostAllowed('https://evilshop.example/', ['*.shop.example'])).toBe(false);
  });
});

describe('assertRedirectsAllowed', () => {
  it('accepts everything without an allowlist', () => {
    expect(() => assertRedirectsAllowed({ success_url: 'https://any.where/' }, undefined)).not.toThrow();
  });

  it('names every refused field', () => {
    try {
      assertRedirectsAllowed({ success_url: 'https://a.example/', cancel_url: 'https://b.example/' }, [
        'c.example',
      ]);
      throw new Error('expected a refusal');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).details?.map((d) => d.path)).toEqual(['success_url', 'cancel_url']);
    }
  });
});
