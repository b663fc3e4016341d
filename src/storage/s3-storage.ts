/**
 * Survey files in an S3 bucket (or an S3-compatible store: NADIR_S3_ENDPOINT, path-style).
 * Credentials and region come from the standard AWS variables (AWS_ACCESS_KEY_ID, ..., AWS_REGION),
 * through the SDK's own chain. Writes are multipart uploads (an object appears only when
 * complete); reads are range GETs on kept-alive connections, batched by RangeReader; GDAL reads
 * the same objects through /vsis3/ with the same endpoint and credentials (gdal-settings.ts).
 *
 * On an S3-compatible store (NADIR_S3_ENDPOINT), given the time to sign with (composition.ts passes
 * the wall clock), the range GETs are signed and sent by s3-range-get.ts on connections of its
 * own (socket-get-pool.ts) instead of the SDK, which spent about 1.6 ms of the event loop on
 * each. On AWS's own endpoints they stay the SDK's: its endpoint rules (virtual hosts, dual-stack,
 * FIPS) are not repeated here, and no test here can reach AWS.
 */
import { createReadStream } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Source } from '@cogeotiff/core';
import type { S3Credentials } from '../config/config.js';
import { BlockCache } from './block-cache.js';
import { RangeReader, type RangeStatistics } from './range-reader.js';
import { S3RangeGet } from './s3-range-get.js';
import { isKey, type StoredObject, type SurveyStorage } from './storage.js';

/** Connections to the store at most, for the SDK and for range reads each. */
const MAX_CONNECTIONS = 64;
/** Parts of a multipart upload: S3's minimum is 5 MiB; four go at once. */
const PART_BYTES = 16 * 1024 * 1024;

export interface S3Location {
  bucket: string;
  /** Key prefix without a trailing slash; '' for the bucket's root. */
  prefix: string;
  /** NADIR_S3_ENDPOINT, e.g. `http://127.0.0.1:9000`: an S3-compatible store, addressed path-style. */
  endpoint?: string;
  /** AWS_REGION (or AWS_DEFAULT_REGION); S3-compatible stores take any. */
  region: string;
  /** From the AWS variables; absent: the SDK's chain (instance profile, ...). */
  credentials?: S3Credentials;
  /** A read that takes longer is a storage failure (503), never a hung request. */
  timeoutMs: number;
  /** Memory for blocks of the files read (NADIR_STORAGE_CACHE_MB); 0 or absent: none. */
  cacheMb?: number;
}

/** `s3://bucket/prefix` into its parts. */
export function parseS3Url(url: string): Pick<S3Location, 'bucket' | 'prefix'> | undefined {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!match) return undefined;
  return { bucket: match[1] as string, prefix: (match[2] ?? '').replace(/\/+$/, '') };
}

async function bufferOf(body: { transformToByteArray(): Promise<Uint8Array> } | undefined): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const bytes = await body.transformToByteArray();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export class S3Storage implements SurveyStorage {
  readonly description: string;
  readonly writable = true;
  readonly statistics: RangeStatistics = { requests: 0, bytes: 0 };
  readonly location: S3Location;
  readonly #client: S3Client;
  /** Range reads without the SDK, on a store named by NADIR_S3_ENDPOINT. */
  readonly #rangeGet: S3RangeGet | undefined;
  readonly #readers = new Map<string, RangeReader>();
  readonly blocks: BlockCache | undefined;

  /**
   * `signingTime`: the time range reads are signed with, which the store checks against its own
   * (S3 refuses more than 15 minutes' skew); without it they go through the SDK.
   */
  constructor(location: S3Location, signingTime?: () => Date) {
    this.location = location;
    this.description = `s3://${location.bucket}/${location.prefix}`;
    this.blocks = location.cacheMb ? new BlockCache(location.cacheMb * 1024 * 1024) : undefined;
    const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: MAX_CONNECTIONS });
    const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: MAX_CONNECTIONS });
    const client = new S3Client({
      region: location.region,
      ...(location.endpoint ? { endpoint: location.endpoint, forcePathStyle: true } : {}),
      ...(location.credentials ? { credentials: location.credentials } : {}),
      // Retries are the reader's decision (a tile request does not wait through three).
      maxAttempts: 2,
      requestHandler: {
        connectionTimeout: 3_000,
        requestTimeout: location.timeoutMs,
        throwOnRequestTimeout: true,
        httpAgent,
        httpsAgent,
      },
    });
    this.#client = client;
    const { endpoint } = location;
    this.#rangeGet =
      endpoint === undefined || signingTime === undefined
        ? undefined
        : new S3RangeGet({
            endpoint,
            region: location.region,
            // The SDK's own chain: explicit keys, or whatever it resolves and refreshes.
            credentials: () => client.config.credentials(),
            timeoutMs: location.timeoutMs,
            maxConnections: MAX_CONNECTIONS,
            // Corrected by the skew the SDK has learnt from the store, as the SDK's signer is.
            now: () => new Date(signingTime().getTime() + (client.config.systemClockOffset ?? 0)),
          });
  }

  /** The object key of a location: a catalogue key under the prefix, or an `s3://` URI of this bucket. */
  objectKey(location: string): string {
    if (isKey(location)) return this.location.prefix ? `${this.location.prefix}/${location}` : location;
    const parsed = parseS3Url(location);
    if (!parsed || parsed.bucket !== this.location.bucket) throw new Error(`${location} is not in ${this.description}`);
    return parsed.prefix;
  }

  keyOf(location: string): string | undefined {
    if (isKey(location)) return location;
    const parsed = parseS3Url(location);
    const base = this.location.prefix ? `${this.location.prefix}/` : '';
    if (parsed?.bucket !== this.location.bucket || !parsed.prefix.startsWith(base)) return undefined;
    return parsed.prefix.slice(base.length);
  }

  source(location: string): Source {
    const key = this.objectKey(location);
    let reader = this.#readers.get(key);
    if (!reader) {
      const rangeGet = this.#rangeGet;
      const { bucket } = this.location;
      reader = new RangeReader(
        new URL(`s3://${bucket}/${key}`),
        (offset, length) => this.#get(key, offset, length),
        this.statistics,
        this.blocks,
        // Where nadir sends the GETs itself (not through the SDK), blocks are written into the
        // cache's slots as they arrive.
        rangeGet &&
          ((offset, length, partBytes, arrived, allocate) =>
            rangeGet.getParts(bucket, key, offset, length, partBytes, arrived, allocate)),
      );
      // Readers are cheap; the open-COG cache above bounds how many files are in use.
      if (this.#readers.size > 4096) this.#readers.clear();
      this.#readers.set(key, reader);
    }
    return reader;
  }

  async probe(location: string): Promise<void> {
    await this.#get(this.objectKey(location), 0, 1);
  }

  async #get(key: string, offset: number, length: number | undefined): Promise<Buffer> {
    if (this.#rangeGet) return this.#rangeGet.get(this.location.bucket, key, offset, length);
    const range = length === undefined ? `bytes=${offset}-` : `bytes=${offset}-${offset + length - 1}`;
    const answer = await this.#client.send(
      new GetObjectCommand({ Bucket: this.location.bucket, Key: key, Range: range }),
      {
        abortSignal: AbortSignal.timeout(this.location.timeoutMs),
      },
    );
    return bufferOf(answer.Body as { transformToByteArray(): Promise<Uint8Array> } | undefined);
  }

  gdalPath(location: string): string {
    return `/vsis3/${this.location.bucket}/${this.objectKey(location)}`;
  }

  async put(key: string, localFile: string): Promise<void> {
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.location.bucket, Key: this.objectKey(key), Body: createReadStream(localFile) },
      partSize: PART_BYTES,
      queueSize: 4,
      // A failed upload aborts: no half object, and no parts left to pay for.
      leavePartsOnError: false,
    });
    await upload.done();
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    const base = this.location.prefix ? `${this.location.prefix}/` : '';
    let token: string | undefined;
    do {
      const page = await this.#client.send(
        new ListObjectsV2Command({
          Bucket: this.location.bucket,
          Prefix: `${base}${prefix}`,
          ContinuationToken: token,
        }),
      );
      for (const object of page.Contents ?? []) {
        if (!object.Key) continue;
        yield {
          key: object.Key.slice(base.length),
          modified: object.LastModified ?? new Date(0),
          size: object.Size ?? 0,
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const objects = keys.slice(i, i + 1000).map((key) => ({ Key: this.objectKey(key) }));
      await this.#client.send(new DeleteObjectsCommand({ Bucket: this.location.bucket, Delete: { Objects: objects } }));
    }
  }

  async ping(): Promise<void> {
    await this.#client.send(new HeadBucketCommand({ Bucket: this.location.bucket }), {
      abortSignal: AbortSignal.timeout(this.location.timeoutMs),
    });
  }

  async close(): Promise<void> {
    this.#rangeGet?.close();
    this.#client.destroy();
  }
}
