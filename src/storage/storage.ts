/**
 * Where survey files live: a local folder (the default), an S3-compatible bucket, or a read-only
 * HTTP(S) location such as a CDN in front of that bucket. Every reader above this seam (the tile
 * reader, GDAL for rasters) works the same on all three: tiles fetch byte ranges through a
 * `Source` (as blacha/cogeotiff's `fetch(offset, length)`), GDAL opens the path `gdalPath` names.
 *
 * The catalogue records a file by its key relative to the storage root
 * (`surveys/<id>/v<version>/<Type>.tif`), so servers reading through a CDN and the one ingesting
 * into the bucket name the same files. Older catalogue rows hold absolute `file://` URIs, which
 * still resolve.
 */
import type { Source } from '@cogeotiff/core';
import type { CacheStats } from '../cache/lru.js';
import { NadirError } from '../errors.js';

/**
 * A Source that can also read straight into the caller's buffer: the tile reader then puts a
 * tile's JPEG tables and its bytes in one buffer, with no buffer of the source's own per read and
 * no copy (local files), or one copy of the bytes fetched (remote ones, range-reader.ts). Sources
 * without it are read with `fetch` and copied.
 */
export interface IntoSource extends Source {
  /** Fills `into` with the bytes from `offset`; resolves to how many there were (fewer at the end of the file). */
  fetchInto(offset: number, into: Uint8Array): Promise<number>;
}

export function readsInto(source: Source): source is IntoSource {
  return typeof (source as Partial<IntoSource>).fetchInto === 'function';
}

export interface StoredObject {
  key: string;
  /** When it was written; what garbage collection's grace period is measured against. */
  modified: Date;
  size: number;
}

export interface SurveyStorage {
  /** For messages: `/data/nadir`, `s3://bucket/prefix`, `https://cdn.example.com/imagery`. */
  readonly description: string;
  /** A read-only location (HTTP) refuses ingest. */
  readonly writable: boolean;
  /** The key of a location in this storage (an older row's absolute URI under its root), if it is in it. */
  keyOf(location: string): string | undefined;
  /** Byte ranges of one stored file, for the tile reader. */
  source(location: string): Source;
  /**
   * Reads the file's first byte from the store itself, past any cache: whether the store answers
   * now (the raster engine's storage watch, storage-watch.ts).
   */
  probe(location: string): Promise<void>;
  /** The path GDAL opens for the file: a local path, `/vsis3/...` or `/vsicurl/...`. */
  gdalPath(location: string): string;
  /** Stores the local file at `key` (a multipart upload to a bucket); visible only when complete. */
  put(key: string, localFile: string): Promise<void>;
  /** Every stored file whose key starts with `prefix`. */
  list(prefix: string): AsyncIterable<StoredObject>;
  delete(keys: readonly string[]): Promise<void>;
  /** Remote storage's cache of file blocks (block-cache.ts), if it keeps one: its lookups for metrics. */
  readonly blocks?: { readonly stats: CacheStats };
  /** Proves the storage answers with these credentials: a server that cannot read fails at start. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The key of a survey version's file. */
export function surveyFileKey(id: string, version: number, file: string): string {
  return `surveys/${id}/v${version}/${file}`;
}

/** The folder (key prefix) of a survey's version. */
export function surveyVersionPrefix(id: string, version: number): string {
  return `surveys/${id}/v${version}/`;
}

/** `location` as a catalogue holds it: a key, or an absolute URI of an older row. */
export function isKey(location: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(location);
}

/**
 * A file the request needs could not be read: missing, refused (credentials) or too slow. The
 * service is at fault, not the request: 503 with a code, and the cause in the log only.
 * `retryAfter`: seconds for the Retry-After header (5 unless the caller knows better).
 */
export function storageUnavailable(location: string, cause: unknown, retryAfter = 5): NadirError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new NadirError(
    'STORAGE_UNAVAILABLE',
    'A survey file could not be read from storage; try again later',
    { retryAfter },
    { cause: new Error(`${location}: ${reason}`) },
  );
}
