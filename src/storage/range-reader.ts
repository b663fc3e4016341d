/**
 * Byte ranges of one remote file, read as few requests as the tile reader's pattern allows: the
 * same range asked for twice at once is one request, and ranges asked for in the same turn of
 * the event loop that lie close together (a COG tile and its mask tile are neighbours in GDAL's
 * layout) go out as one request and are cut apart again.
 */
import type { Source } from '@cogeotiff/core';

/** Fetches `length` bytes at `offset` (to the end when `length` is undefined). */
export type RangeFetch = (offset: number, length: number | undefined) => Promise<Buffer>;

/** Ranges closer than this are read as one (reading the gap costs less than a round trip). */
const MERGE_GAP_BYTES = 64 * 1024;
/** A merged request never grows past this. */
const MAX_MERGED_BYTES = 4 * 1024 * 1024;

interface Wanted {
  offset: number;
  end: number;
  resolve(bytes: Buffer): void;
  reject(error: unknown): void;
}

export interface RangeStatistics {
  /** Requests sent to the store. */
  requests: number;
  /** Bytes they returned. */
  bytes: number;
}

export class RangeReader implements Source {
  readonly url: URL;
  readonly #fetch: RangeFetch;
  readonly #statistics: RangeStatistics;
  readonly #inFlight = new Map<string, Promise<Buffer>>();
  #batch: Wanted[] = [];

  /** `statistics`: counts shared by the readers of one storage (benchmarks report them). */
  constructor(url: URL, fetch: RangeFetch, statistics: RangeStatistics) {
    this.url = url;
    this.#fetch = fetch;
    this.#statistics = statistics;
  }

  async fetch(offset: number, length?: number): Promise<ArrayBuffer> {
    const bytes = await this.read(offset, length);
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  read(offset: number, length?: number): Promise<Buffer> {
    if (length === undefined) return this.#send(offset, undefined);
    const id = `${offset}+${length}`;
    let reading = this.#inFlight.get(id);
    if (!reading) {
      reading = new Promise<Buffer>((resolve, reject) => {
        if (this.#batch.length === 0) setImmediate(() => this.#flush());
        this.#batch.push({ offset, end: offset + length, resolve, reject });
      }).finally(() => this.#inFlight.delete(id));
      this.#inFlight.set(id, reading);
    }
    return reading;
  }

  #flush(): void {
    const batch = this.#batch.sort((a, b) => a.offset - b.offset);
    this.#batch = [];
    let group: Wanted[] = [];
    let start = 0;
    let end = 0;
    const send = () => {
      const members = group;
      const from = start;
      this.#send(from, end - from).then(
        (bytes) => {
          for (const wanted of members) wanted.resolve(bytes.subarray(wanted.offset - from, wanted.end - from));
        },
        (error: unknown) => {
          for (const wanted of members) wanted.reject(error);
        },
      );
    };
    for (const wanted of batch) {
      const joins =
        group.length > 0 && wanted.offset <= end + MERGE_GAP_BYTES && wanted.end - start <= MAX_MERGED_BYTES;
      if (!joins) {
        if (group.length > 0) send();
        group = [];
        start = wanted.offset;
        end = wanted.end;
      }
      group.push(wanted);
      end = Math.max(end, wanted.end);
    }
    if (group.length > 0) send();
  }

  async #send(offset: number, length: number | undefined): Promise<Buffer> {
    this.#statistics.requests++;
    const bytes = await this.#fetch(offset, length);
    this.#statistics.bytes += bytes.byteLength;
    return bytes;
  }
}
