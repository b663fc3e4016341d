/**
 * Survey files read over HTTP(S) from a base URL, e.g. a CDN in front of the bucket that ingest
 * writes to: `NADIR_STORAGE=https://cdn.example.com/imagery`. Read-only: servers that only serve
 * (no ingest) need no credentials. Reads are range GETs (keep-alive is fetch's own), batched by
 * RangeReader; GDAL reads the same files through /vsicurl/.
 */
import type { Source } from '@cogeotiff/core';
import { NadirError } from '../errors.js';
import { BlockCache } from './block-cache.js';
import { RangeReader, type RangeStatistics } from './range-reader.js';
import { isKey, type StoredObject, type SurveyStorage } from './storage.js';

export class HttpStorage implements SurveyStorage {
  readonly description: string;
  readonly writable = false;
  readonly statistics: RangeStatistics = { requests: 0, bytes: 0 };
  readonly #base: string;
  readonly #timeoutMs: number;
  readonly #readers = new Map<string, RangeReader>();
  readonly blocks: BlockCache | undefined;

  /**
   * `base`: where key `surveys/...` is `<base>/surveys/...`; a read slower than `timeoutMs` fails.
   * `cacheMb`: memory for blocks of the files read (0: none).
   */
  constructor(base: string, timeoutMs: number, cacheMb = 0) {
    this.#base = base.replace(/\/+$/, '');
    this.#timeoutMs = timeoutMs;
    this.blocks = cacheMb ? new BlockCache(cacheMb * 1024 * 1024) : undefined;
    this.description = this.#base;
  }

  urlOf(location: string): string {
    return isKey(location) ? `${this.#base}/${location}` : location;
  }

  keyOf(location: string): string | undefined {
    if (isKey(location)) return location;
    return location.startsWith(`${this.#base}/`) ? location.slice(this.#base.length + 1) : undefined;
  }

  source(location: string): Source {
    const url = this.urlOf(location);
    let reader = this.#readers.get(url);
    if (!reader) {
      reader = new RangeReader(
        new URL(url),
        (offset, length) => this.#get(url, offset, length),
        this.statistics,
        this.blocks,
      );
      if (this.#readers.size > 4096) this.#readers.clear();
      this.#readers.set(url, reader);
    }
    return reader;
  }

  async probe(location: string): Promise<void> {
    await this.#get(this.urlOf(location), 0, 1);
  }

  async #get(url: string, offset: number, length: number | undefined): Promise<Buffer> {
    const range = length === undefined ? `bytes=${offset}-` : `bytes=${offset}-${offset + length - 1}`;
    const response = await fetch(url, { headers: { range }, signal: AbortSignal.timeout(this.#timeoutMs) });
    if (response.status !== 206 && !(response.status === 200 && offset === 0 && length === undefined)) {
      await response.body?.cancel();
      throw new Error(`${url}: HTTP ${response.status} to a range request`);
    }
    return Buffer.from(await response.arrayBuffer());
  }

  gdalPath(location: string): string {
    return `/vsicurl/${this.urlOf(location)}`;
  }

  async put(): Promise<void> {
    throw new NadirError(
      'INVALID_CONFIG',
      `${this.description} is read-only storage: ingest needs a folder or s3:// bucket`,
    );
  }

  list(): AsyncIterable<StoredObject> {
    throw new NadirError('INVALID_CONFIG', `${this.description} is read-only storage: it cannot be listed`);
  }

  async delete(): Promise<void> {
    throw new NadirError('INVALID_CONFIG', `${this.description} is read-only storage`);
  }

  async ping(): Promise<void> {
    // Any answer from the server will do (a CDN root is often 403 or 404): it is there.
    const response = await fetch(`${this.#base}/`, { method: 'HEAD', signal: AbortSignal.timeout(this.#timeoutMs) });
    await response.body?.cancel();
  }

  async close(): Promise<void> {}
}
