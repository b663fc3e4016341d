/**
 * Range GETs of S3 objects signed here (AWS Signature Version 4) and sent on kept-alive
 * connections of their own (socket-get-pool.ts), without the SDK. A tile read is one small GET,
 * and through the SDK's client each one cost about 1.6 ms of the event loop (endpoint rules, serde
 * schemas, middleware, signing: bench/storage, docs/benchmarks.md), several times what sending
 * the tile costs. Writes, listings and the start-up check stay the SDK's (s3-storage.ts);
 * credentials come from the SDK's own chain, so a key that rotates is picked up as the SDK would.
 *
 * Signing follows AWS's "Signature Calculations for the Authorization Header" (the GET Object
 * example there is this module's unit test): the canonical request of method, path, no query, the
 * host, range and x-amz-* headers, and the hash of the empty payload.
 */
import { createHash, createHmac } from 'node:crypto';
import { type BodySink, SocketGetPool } from './socket-get-pool.js';

export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** A connection to the store idle this long is closed (S3 closes its own after about 20 s). */
const IDLE_CONNECTION_MS = 15_000;

/** SHA-256 of an empty payload: a GET's body. */
const EMPTY_PAYLOAD_HASH = createHash('sha256').update('').digest('hex');

/** `20130524T000000Z` */
function amzDate(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** A path segment as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ percent-encoded. */
function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `/bucket/key` (path-style) with each segment encoded once, as S3 canonicalises it. */
export function objectPath(bucket: string, key: string): string {
  return `/${[bucket, ...key.split('/')].map(encodeSegment).join('/')}`;
}

export interface SignedRequest {
  /** The headers to send: host, range, x-amz-date, x-amz-content-sha256, authorization (and the session token). */
  headers: Record<string, string>;
}

/** The signing key of a day, region and service: four HMACs, the same all day. */
function signingKey(secret: string, day: string, region: string): Buffer {
  const date = createHmac('sha256', `AWS4${secret}`).update(day).digest();
  const regional = createHmac('sha256', date).update(region).digest();
  const service = createHmac('sha256', regional).update('s3').digest();
  return createHmac('sha256', service).update('aws4_request').digest();
}

/**
 * The headers of a signed GET of `path` on `host` with `range`. Pure (the time is given), so AWS's
 * published example checks it. `keys` caches signing keys by secret, day and region.
 */
export function signRangeGet(
  options: { host: string; path: string; range: string; region: string; now: Date },
  credentials: SigningCredentials,
  keys: Map<string, Buffer> = new Map(),
): SignedRequest {
  const { host, path, range, region, now } = options;
  const date = amzDate(now);
  const day = date.slice(0, 8);
  const headers: [string, string][] = [
    ['host', host],
    ['range', range],
    ['x-amz-content-sha256', EMPTY_PAYLOAD_HASH],
    ['x-amz-date', date],
  ];
  if (credentials.sessionToken) headers.push(['x-amz-security-token', credentials.sessionToken]);
  const signedHeaders = headers.map(([name]) => name).join(';');
  const canonical = [
    'GET',
    path,
    '',
    ...headers.map(([name, value]) => `${name}:${value.trim()}`),
    '',
    signedHeaders,
    EMPTY_PAYLOAD_HASH,
  ].join('\n');
  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  const cacheKey = `${credentials.secretAccessKey}\n${day}\n${region}`;
  let key = keys.get(cacheKey);
  if (!key) {
    // One key per day and region: the map never holds more than a few.
    if (keys.size > 16) keys.clear();
    key = signingKey(credentials.secretAccessKey, day, region);
    keys.set(cacheKey, key);
  }
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  const authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { headers: { ...Object.fromEntries(headers), authorization } };
}

export interface S3RangeGetOptions {
  /** The store's base URL (NADIR_S3_ENDPOINT): objects are `<endpoint>/<bucket>/<key>`, path-style. */
  endpoint: string;
  region: string;
  /** The SDK client's credential provider (it caches and refreshes). */
  credentials: () => Promise<SigningCredentials>;
  timeoutMs: number;
  /** Connections to the store at most (GETs beyond wait their turn). */
  maxConnections: number;
  /** The signing time. */
  now: () => Date;
}

/** An error answer's body is read this far, for the store's error code. */
const ERROR_BODY_BYTES = 2048;

/** The body whole, in one buffer of the announced length (or gathered, when none is announced). */
function wholeBody(announced: number | undefined): BodySink<Buffer> {
  if (announced === undefined) {
    const chunks: Buffer[] = [];
    return {
      write: (buffer, from, to) => chunks.push(Buffer.from(buffer.subarray(from, to))),
      finish: () => Buffer.concat(chunks),
    };
  }
  const body = Buffer.allocUnsafe(announced);
  let filled = 0;
  return {
    write: (buffer, from, to) => {
      filled += buffer.copy(body, filled, from, to);
    },
    finish: () => body,
  };
}

/**
 * The body written into buffers of `partBytes` each as it arrives (the last one shorter), each
 * from `allocate` (the block cache's slots) or else of its own, so none shares memory with
 * another (range-reader.ts RangePartsFetch); each is handed to `arrived` the moment it is full.
 */
function bodyInParts(
  announced: number | undefined,
  partBytes: number,
  arrived?: (index: number, part: Buffer) => void,
  allocate: (bytes: number) => Buffer = Buffer.allocUnsafeSlow,
): BodySink<Buffer[]> {
  if (announced === undefined) {
    // No length to size the parts by: whole, then cut (and copied, so each part owns its memory).
    const whole = wholeBody(undefined);
    return {
      write: whole.write,
      finish: () => {
        const body = whole.finish();
        const parts: Buffer[] = [];
        for (let at = 0; at < body.length; at += partBytes) parts.push(Buffer.from(body.subarray(at, at + partBytes)));
        return parts;
      },
    };
  }
  const parts: Buffer[] = [];
  let part: Buffer | undefined;
  let filled = 0;
  return {
    write: (buffer, from, to) => {
      for (let at = from; at < to; ) {
        if (!part || filled === part.length) {
          part = allocate(Math.min(partBytes, announced - parts.length * partBytes));
          parts.push(part);
          filled = 0;
        }
        const copied = buffer.copy(part, filled, at, to);
        filled += copied;
        at += copied;
        if (filled === part.length) arrived?.(parts.length - 1, part);
      }
    },
    finish: () => parts,
  };
}

/** An error answer: its first bytes are kept for the store's error code, and `finish` throws. */
function errorBody(status: number, path: string): BodySink<never> {
  let text = '';
  return {
    write: (buffer, from, to) => {
      if (text.length < ERROR_BODY_BYTES) text += buffer.toString('utf8', from, Math.min(to, from + ERROR_BODY_BYTES));
    },
    finish: () => {
      const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
      throw new Error(`object storage answered HTTP ${status}${code ? ` ${code}` : ''} to a range read of ${path}`);
    },
  };
}

export class S3RangeGet {
  readonly #options: S3RangeGetOptions;
  readonly #base: URL;
  readonly #keys = new Map<string, Buffer>();
  readonly #connections: SocketGetPool;

  constructor(options: S3RangeGetOptions) {
    this.#options = options;
    this.#base = new URL(options.endpoint);
    this.#connections = new SocketGetPool({
      origin: this.#base,
      maxConnections: options.maxConnections,
      idleMs: IDLE_CONNECTION_MS,
    });
  }

  /** `length` bytes of the object at `offset` (to its end when undefined); any other answer throws. */
  get(bucket: string, key: string, offset: number, length: number | undefined): Promise<Buffer> {
    return this.#get(bucket, key, offset, length, wholeBody);
  }

  /** `get`, the bytes in parts of `partBytes` (RangePartsFetch). */
  getParts(
    bucket: string,
    key: string,
    offset: number,
    length: number,
    partBytes: number,
    arrived?: (index: number, part: Buffer) => void,
    allocate?: (bytes: number) => Buffer,
  ): Promise<Buffer[]> {
    return this.#get(bucket, key, offset, length, (announced) => bodyInParts(announced, partBytes, arrived, allocate));
  }

  close(): void {
    this.#connections.close();
  }

  async #get<T>(
    bucket: string,
    key: string,
    offset: number,
    length: number | undefined,
    sink: (announced: number | undefined) => BodySink<T>,
  ): Promise<T> {
    const range = length === undefined ? `bytes=${offset}-` : `bytes=${offset}-${offset + length - 1}`;
    const prefix = this.#base.pathname.replace(/\/+$/, '');
    const path = `${prefix}${objectPath(bucket, key)}`;
    const { region, timeoutMs } = this.#options;
    const { headers } = signRangeGet(
      { host: this.#base.host, path, range, region, now: this.#options.now() },
      await this.#options.credentials(),
      this.#keys,
    );
    let lines = '';
    for (const name in headers) lines += `${name}: ${headers[name]}\r\n`;
    // The whole object answers an open range from 0 with a 200; any other range wants a 206.
    const wholeObject = offset === 0 && length === undefined;
    return this.#connections.get(
      path,
      lines,
      (head) => {
        if (head.status !== 206 && !(head.status === 200 && wholeObject)) return errorBody(head.status, path);
        const announced = head.headers.get('content-length');
        return sink(announced === undefined ? undefined : Number(announced));
      },
      timeoutMs,
    );
  }
}
