/**
 * Range GETs of S3 objects signed here (AWS Signature Version 4) and sent on a keep-alive agent,
 * without the SDK. A tile read is one small GET, and through the SDK's client each one cost about
 * 1.6 ms of the event loop (endpoint rules, serde schemas, middleware, signing: bench/storage,
 * docs/benchmarks.md), several times what sending the tile costs. Writes, listings and the
 * start-up check stay the SDK's (s3-storage.ts); credentials come from the SDK's own chain, so a
 * key that rotates is picked up as the SDK would.
 *
 * Signing follows AWS's "Signature Calculations for the Authorization Header" (the GET Object
 * example there is this module's unit test): the canonical request of method, path, no query, the
 * host, range and x-amz-* headers, and the hash of the empty payload.
 */
import { createHash, createHmac } from 'node:crypto';
import { type Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

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
  agent: HttpAgent | HttpsAgent;
  /** The signing time. */
  now: () => Date;
}

/** A GET's answer, read whole into one buffer of the announced length. */
function bodyOf(response: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const announced = Number(response.headers['content-length']);
    const chunks: Buffer[] = [];
    let length = 0;
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
    });
    response.on('error', reject);
    response.on('end', () => {
      if (Number.isFinite(announced) && length !== announced)
        reject(new Error(`object storage sent ${length} of ${announced} bytes`));
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length));
    });
  });
}

/**
 * A GET's answer written into buffers of `partBytes` each as it arrives (the last one shorter),
 * each allocated at its own size, so each owns its memory (range-reader.ts RangePartsFetch).
 */
function partsOf(response: IncomingMessage, partBytes: number): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const announced = Number(response.headers['content-length']);
    if (!Number.isSafeInteger(announced) || announced < 0) {
      // No length to size the parts by: whole, then cut (and copied, so each part owns its memory).
      bodyOf(response).then((body) => {
        const parts: Buffer[] = [];
        for (let at = 0; at < body.length; at += partBytes) parts.push(Buffer.from(body.subarray(at, at + partBytes)));
        resolve(parts);
      }, reject);
      return;
    }
    const parts: Buffer[] = [];
    let part: Buffer | undefined;
    let filled = 0;
    let length = 0;
    response.on('data', (chunk: Buffer) => {
      for (let at = 0; at < chunk.length; ) {
        if (!part || filled === part.length) {
          const left = announced - parts.length * partBytes;
          if (left <= 0) {
            response.destroy(new Error(`object storage sent more than the ${announced} bytes it announced`));
            return;
          }
          part = Buffer.allocUnsafeSlow(Math.min(partBytes, left));
          parts.push(part);
          filled = 0;
        }
        const copied = chunk.copy(part, filled, at);
        filled += copied;
        at += copied;
        length += copied;
      }
    });
    response.on('error', reject);
    response.on('end', () => {
      if (length !== announced) reject(new Error(`object storage sent ${length} of ${announced} bytes`));
      else resolve(parts);
    });
  });
}

export class S3RangeGet {
  readonly #options: S3RangeGetOptions;
  readonly #base: URL;
  readonly #keys = new Map<string, Buffer>();

  constructor(options: S3RangeGetOptions) {
    this.#options = options;
    this.#base = new URL(options.endpoint);
  }

  /** `length` bytes of the object at `offset` (to its end when undefined); any other answer throws. */
  get(bucket: string, key: string, offset: number, length: number | undefined): Promise<Buffer> {
    return this.#get(bucket, key, offset, length, bodyOf);
  }

  /** `get`, the bytes in parts of `partBytes` (RangePartsFetch). */
  getParts(bucket: string, key: string, offset: number, length: number, partBytes: number): Promise<Buffer[]> {
    return this.#get(bucket, key, offset, length, (response) => partsOf(response, partBytes));
  }

  async #get<T>(
    bucket: string,
    key: string,
    offset: number,
    length: number | undefined,
    read: (response: IncomingMessage) => Promise<T>,
  ): Promise<T> {
    const range = length === undefined ? `bytes=${offset}-` : `bytes=${offset}-${offset + length - 1}`;
    const prefix = this.#base.pathname.replace(/\/+$/, '');
    const path = `${prefix}${objectPath(bucket, key)}`;
    try {
      return await this.#send(path, range, read);
    } catch (error) {
      // A kept-alive connection the store closed just as it was reused: once more on a new one
      // (node's documented answer to that race), as the SDK's one retry did.
      if ((error as { reusedSocket?: boolean }).reusedSocket) return this.#send(path, range, read);
      throw error;
    }
  }

  async #send<T>(path: string, range: string, read: (response: IncomingMessage) => Promise<T>): Promise<T> {
    const { region, timeoutMs, agent } = this.#options;
    const base = this.#base;
    const { headers } = signRangeGet(
      { host: base.host, path, range, region, now: this.#options.now() },
      await this.#options.credentials(),
      this.#keys,
    );
    const send = base.protocol === 'https:' ? httpsRequest : httpRequest;
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = send(
        {
          protocol: base.protocol,
          hostname: base.hostname,
          port: base.port,
          path,
          method: 'GET',
          headers,
          agent,
          signal: AbortSignal.timeout(timeoutMs),
        },
        resolve,
      );
      outgoing.on('error', (error: Error & { reusedSocket?: boolean }) => {
        const code = (error as NodeJS.ErrnoException).code;
        if (outgoing.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE')) error.reusedSocket = true;
        reject(error);
      });
      outgoing.end();
    });
    const status = response.statusCode ?? 0;
    if (status === 206 || (status === 200 && range.endsWith('-') && range.startsWith('bytes=0-')))
      return read(response);
    const body = await bodyOf(response);
    const code = /<Code>([^<]*)<\/Code>/.exec(body.toString('utf8', 0, Math.min(body.length, 2048)))?.[1];
    throw new Error(`object storage answered HTTP ${status}${code ? ` ${code}` : ''} to a range read of ${path}`);
  }
}
