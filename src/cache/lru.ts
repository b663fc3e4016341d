/**
 * A bounded least-recently-used map. Bounded twice: by entry count and by a total weight (bytes,
 * usually), so a cache of decoded tiles cannot grow past its memory budget whatever the entries
 * weigh. Map keeps insertion order. A hit only marks its entry (re-inserting it on every hit was a
 * twentieth of a stored tile's cost: two more hashings of the key and a Map that keeps compacting);
 * eviction then gives the oldest entries that were used since they were (re)inserted a second
 * chance at the back, the classic "second chance" approximation of LRU.
 */
export interface LruOptions<V> {
  maxEntries: number;
  /** Total weight allowed; default unbounded (count only). */
  maxWeight?: number;
  /** Weight of one value; default 1. */
  weigh?: (value: V) => number;
  /** Called for every value pushed out or deleted (to close file handles, say). */
  onEvict?: (key: string, value: V) => void;
}

/** What a cache holds and how its lookups went since it was made (for metrics). */
export interface CacheStats {
  entries: number;
  /** The total weight held (bytes, for the caches that weigh by bytes). */
  weight: number;
  hits: number;
  misses: number;
}

export class LruCache<V> {
  readonly #entries = new Map<string, { value: V; weight: number; used: boolean }>();
  readonly #maxEntries: number;
  readonly #maxWeight: number;
  readonly #weigh: (value: V) => number;
  readonly #onEvict: ((key: string, value: V) => void) | undefined;
  #weight = 0;
  #hits = 0;
  #misses = 0;

  constructor(options: LruOptions<V>) {
    if (!(options.maxEntries >= 1)) throw new RangeError('maxEntries must be at least 1');
    this.#maxEntries = options.maxEntries;
    this.#maxWeight = options.maxWeight ?? Number.POSITIVE_INFINITY;
    this.#weigh = options.weigh ?? (() => 1);
    this.#onEvict = options.onEvict;
  }

  get size(): number {
    return this.#entries.size;
  }

  get weight(): number {
    return this.#weight;
  }

  get stats(): CacheStats {
    return { entries: this.#entries.size, weight: this.#weight, hits: this.#hits, misses: this.#misses };
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      this.#misses++;
      return undefined;
    }
    this.#hits++;
    entry.used = true;
    return entry.value;
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  /** A value heavier than the whole budget is not kept (it would evict everything and then itself). */
  set(key: string, value: V): void {
    this.delete(key);
    const weight = this.#weigh(value);
    if (weight > this.#maxWeight) {
      this.#onEvict?.(key, value);
      return;
    }
    this.#entries.set(key, { value, weight, used: false });
    this.#weight += weight;
    while (this.#entries.size > this.#maxEntries || this.#weight > this.#maxWeight) {
      const [oldest, entry] = this.#entries.entries().next().value as [string, { used: boolean }];
      if (entry.used) {
        // Ends: every entry passed over loses its mark, so the next pass evicts.
        entry.used = false;
        this.#entries.delete(oldest);
        this.#entries.set(oldest, entry as { value: V; weight: number; used: boolean });
        continue;
      }
      this.delete(oldest);
    }
  }

  delete(key: string): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#entries.delete(key);
    this.#weight -= entry.weight;
    this.#onEvict?.(key, entry.value);
    return true;
  }

  clear(): void {
    for (const key of [...this.#entries.keys()]) this.delete(key);
  }
}
