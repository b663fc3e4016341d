import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LruCache } from '../../src/cache/lru.js';

describe('LruCache', () => {
  it('evicts the least recently used entry beyond maxEntries; get() counts as use', () => {
    const evicted: string[] = [];
    const cache = new LruCache<number>({ maxEntries: 2, onEvict: (key) => evicted.push(key) });
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1);
    cache.set('c', 3);
    assert.deepEqual(evicted, ['b']);
    assert.equal(cache.get('b'), undefined);
    assert.deepEqual([cache.get('a'), cache.get('c'), cache.size], [1, 3, 2]);
  });

  it('keeps entries read since they were stored, however old, and evicts one that was not', () => {
    const evicted: string[] = [];
    const cache = new LruCache<number>({ maxEntries: 3, onEvict: (key) => evicted.push(key) });
    for (const key of ['a', 'b', 'c']) cache.set(key, 1);
    cache.get('a');
    cache.get('b');
    cache.set('d', 1);
    assert.deepEqual(evicted, ['c']);
    // a and b had their second chance: unread since, they are now the oldest.
    cache.get('d');
    cache.set('e', 1);
    cache.set('f', 1);
    assert.deepEqual(evicted, ['c', 'a', 'b']);
    assert.deepEqual([cache.has('d'), cache.has('e'), cache.has('f')], [true, true, true]);
  });

  it('keeps the total weight within maxWeight, evicting as many as needed', () => {
    const cache = new LruCache<Buffer>({ maxEntries: 100, maxWeight: 10, weigh: (b) => b.length });
    cache.set('a', Buffer.alloc(4));
    cache.set('b', Buffer.alloc(4));
    cache.set('c', Buffer.alloc(8));
    assert.deepEqual([cache.has('a'), cache.has('b'), cache.has('c'), cache.weight], [false, false, true, 8]);
  });

  it('does not keep a value heavier than the whole budget, and replacing a key re-weighs it', () => {
    const evicted: string[] = [];
    const cache = new LruCache<Buffer>({
      maxEntries: 10,
      maxWeight: 10,
      weigh: (b) => b.length,
      onEvict: (k) => evicted.push(k),
    });
    cache.set('small', Buffer.alloc(3));
    cache.set('huge', Buffer.alloc(11));
    assert.equal(cache.has('huge'), false);
    assert.equal(cache.has('small'), true, 'the oversized value evicts nothing else');
    cache.set('small', Buffer.alloc(5));
    assert.equal(cache.weight, 5);
    assert.deepEqual(evicted, ['huge', 'small']);
  });

  it('delete and clear call onEvict for each entry', () => {
    const evicted: string[] = [];
    const cache = new LruCache<number>({ maxEntries: 5, onEvict: (key) => evicted.push(key) });
    for (const key of ['a', 'b', 'c']) cache.set(key, 1);
    assert.equal(cache.delete('b'), true);
    assert.equal(cache.delete('b'), false);
    cache.clear();
    assert.deepEqual(evicted, ['b', 'a', 'c']);
    assert.equal(cache.size, 0);
  });
});
