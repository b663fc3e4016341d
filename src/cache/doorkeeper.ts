/**
 * Remembers the keys asked for recently, so a cache can admit a value on its second request only
 * (TinyLFU's "doorkeeper"). An origin behind a CDN, or a map panning over new ground, sees most
 * tiles once: admitting each of them evicts what is asked for again, and in V8 a value a cache holds
 * for a few seconds outlives the young generation, so every tile seen once became work for a full
 * garbage collection that holds up every request in flight. A key costs about a hundred bytes.
 */
import { LruCache } from './lru.js';

export class Doorkeeper {
  readonly #seen: LruCache<true>;

  /** `maxKeys`: how many recent keys count as "seen before"; older ones are forgotten. */
  constructor(maxKeys: number) {
    this.#seen = new LruCache<true>({ maxEntries: Math.max(1, Math.floor(maxKeys)) });
  }

  /** Whether `key` was seen before; remembers it either way. */
  secondSighting(key: string): boolean {
    if (this.#seen.get(key)) return true;
    this.#seen.set(key, true);
    return false;
  }

  /** Whether `key` was seen before, without counting this look as a sighting. */
  seen(key: string): boolean {
    return this.#seen.has(key);
  }
}
