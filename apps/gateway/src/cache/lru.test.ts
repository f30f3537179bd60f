import { lruCache } from './lru';

describe('lruCache', () => {
  it('returns an entry until its ttl has passed by the injected clock', () => {
    let now = 1_000;
    const cache = lruCache<string, { v: string | null }>({ max: 10, ttlMs: 1_000, clock: () => now });
    cache.set('a', { v: 'x' });
    cache.set('b', { v: null });
    now = 1_999;
    expect(cache.get('a')).toEqual({ v: 'x' });
    expect(cache.get('b')).toEqual({ v: null });
    now = 2_001;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('missing')).toBeUndefined();
  });

  it('reads the clock on every check, not a cached time', () => {
    // Not 0: lru-cache reads a start time of 0 as "no ttl".
    let now = 5_000;
    const cache = lruCache<string, number>({ max: 10, ttlMs: 10, clock: () => now });
    cache.set('a', 1);
    expect(cache.get('a')).toBe(1);
    now = 5_011;
    expect(cache.get('a')).toBeUndefined();
  });

  it('pushes out the least recently used entry past max', () => {
    const cache = lruCache<string, number>({ max: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.get('a');
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.size).toBe(2);
  });

  it('calls onEvict for an entry pushed out, not for delete or overwrite', () => {
    const evicted: string[] = [];
    const cache = lruCache<string, string>({
      max: 2,
      onEvict: (value, key) => evicted.push(`${key}=${value}`),
    });
    cache.set('a', '1');
    cache.set('a', '2');
    cache.set('b', '3');
    cache.delete('b');
    cache.set('c', '4');
    cache.set('d', '5');
    expect(evicted).toEqual(['a=2']);
  });
});
