/**
 * Rendered imagery kept a little while for the request that made it, so a client that reads a
 * file in pieces (GDAL's /vsicurl/ and STACIT: a HEAD, then ranges) gets them all from one render
 * instead of a render per piece. Kept by the request's identity (token, survey version, type,
 * format, point, radius, size: the token is a credential, so only a digest of it is held),
 * bounded in bytes, dropped after TTL_MS on the service's clock. Renders of one identity in flight
 * are shared (if the first asker's fails, each other asker renders its own). Billing is not here:
 * the route bills every answer as before, once per token.
 */
import { createHash } from 'node:crypto';
import { LruCache } from '../../cache/lru.js';
import type { Clock } from '../../clock.js';
import type { RenderResult } from '../../raster/index.js';

/** Long enough for a GIS client's reads of one file; short, since the survey may be re-ingested. */
export const TTL_MS = 10 * 60_000;
/** A few of the largest files (a 5000 px RGBA GeoTIFF is up to ~100 MB, usually far less). */
export const BUDGET_BYTES = 256 * 1024 * 1024;

interface Kept {
  result: RenderResult;
  until: number;
}

export class RenderedFiles {
  readonly #clock: Clock;
  readonly #kept: LruCache<Kept>;
  readonly #rendering = new Map<string, Promise<RenderResult>>();

  constructor(clock: Clock, budgetBytes = BUDGET_BYTES) {
    this.#clock = clock;
    this.#kept = new LruCache<Kept>({
      maxEntries: 1024,
      maxWeight: budgetBytes,
      weigh: (kept) => kept.result.body.length,
    });
  }

  /** The key of a request: parts that decide the file's bytes. */
  static keyOf(parts: readonly (string | number)[]): string {
    return createHash('sha256').update(parts.join('\u0000')).digest('base64url');
  }

  /** The kept file of `key`, or `render()`'s (shared with any render of the same key in flight). */
  async get(key: string, render: () => Promise<RenderResult>): Promise<RenderResult> {
    const now = this.#clock().getTime();
    const kept = this.#kept.get(key);
    if (kept && kept.until > now) return kept.result;
    const running = this.#rendering.get(key);
    // The first asker's render may fail for the first asker alone (it hung up while queued): the
    // others then render for themselves rather than share its failure.
    if (running) return running.catch(() => render());
    const rendering = render();
    this.#rendering.set(key, rendering);
    try {
      const result = await rendering;
      // An image with no pixels of the survey is an error answer, not a file to keep.
      if (!result.empty) this.#kept.set(key, { result, until: this.#clock().getTime() + TTL_MS });
      return result;
    } finally {
      this.#rendering.delete(key);
    }
  }
}
