import { TtlLruCache } from './lru-cache';

describe('TtlLruCache', () => {
  it('returns a value until its ttl passes, including a cached null', () => {
    const cache = new TtlLruCache<string | null>(10, 1000);
    cache.set('a', 'x', 0);
    cache.set('b', null, 0);
    expect(cache.get('a', 999)).toEqual({ value: 'x' });
    expect(cache.get('b', 500)).toEqual({ value: null });
    expect(cache.get('a', 1000)).toBeUndefined();
    expect(cache.get('missing', 0)).toBeUndefined();
  });

  it('evicts the least recently used entry beyond its size', () => {
    const cache = new TtlLruCache<number>(2, 10_000);
    cache.set('a', 1, 0);
    cache.set('b', 2, 0);
    cache.get('a', 1);
    cache.set('c', 3, 2);
    expect(cache.get('b', 3)).toBeUndefined();
    expect(cache.get('a', 3)).toEqual({ value: 1 });
    expect(cache.get('c', 3)).toEqual({ value: 3 });
    expect(cache.size).toBe(2);
  });

  it('forgets deleted entries', () => {
    const cache = new TtlLruCache<number>(2, 10_000);
    cache.set('a', 1, 0);
    cache.delete('a');
    expect(cache.get('a', 1)).toBeUndefined();
  });
});
