/**
 * The tile fast lane. Map clients ask for tiles by the thousand, and sending a stored tile is all
 * node:http has to do for most of them, while fastify's routing, hooks and reply machinery around
 * it cost more than the sending (docs/tiles.md). So the HTTP server offers every request to the lane
 * first; the lane answers the tile requests it can answer exactly as the fastify routes
 * (tile-route.ts) would, and hands everything else to fastify untouched.
 *
 * It decides before it counts anything against the key: a request is taken only when it is a
 * GET or HEAD of a well-formed tile address with plain query values (no percent-encoding, no
 * repeats), a valid key, and imagery to plan. Whatever it declines (bad input, unknown keys,
 * surveys that do not exist, empty tiles, shutdown) meets fastify's validation and error table as
 * before. Once taken, the answer uses the same helpers as the routes (tile-http.ts): the rate
 * limit, the ETag, 304s, the renderer, the usage count, and failures through the error table.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { usageMonthOf } from '../../accounts/index.js';
import { LruCache } from '../../cache/lru.js';
import type { Services } from '../../composition.js';
import { utcDate } from '../../geo/dates.js';
import { rotationFor } from '../../tiles/panorama.js';
import type { MemoPlan } from '../../tiles/plan-memo.js';
import type { RenderedTile } from '../../tiles/tile-renderer.js';
import { failureFromError } from '../error-table.js';
import { redactUrl } from '../log-safety.js';
import { rawHeader } from '../raw-header.js';
import { accessLogEnabled, CORS_HEADERS } from '../request-lifecycle.js';
import type { ServerState } from '../system-routes.js';
import type { RequestHead } from './request-head.js';
import type { SocketAnswer } from './socket-lane.js';
import { type StoredAnswer, storedTaken, type Taken, takeRequest } from './tile-ask.js';
import { cacheControlOf, etagOf, matchesIfNoneMatch, noImagery, rateLimited, rateLimitPairs } from './tile-http.js';

type NodeHandler = (request: IncomingMessage, response: ServerResponse) => void;

const JSON_TYPE = 'application/json; charset=utf-8';
const STANDARD_HEADERS = Object.entries(CORS_HEADERS).flat();

/** Remembered pass-through answers; their bodies are the stored-JPEG cache's own buffers. */
const STORED_ANSWERS = 65_536;
const STORED_ANSWER_BYTES = 64 * 1024 * 1024;

function notModified(headers: string[], etag: string, cacheControl: string): void {
  headers.push('etag', etag, 'cache-control', cacheControl);
}

/** Adds Server-Timing (saying which way the answer went) and Content-Length; returns the duration. */
function completeHeaders(
  headers: string[],
  timings: string[],
  taken: Taken,
  body: Buffer | undefined,
  via: string,
): number {
  const durationMs = performance.now() - taken.started;
  timings.push(via, `total;dur=${durationMs.toFixed(2)}`);
  headers.push('server-timing', timings.join(', '));
  if (body) headers.push('content-length', String(body.byteLength));
  return durationMs;
}

export class TileLane {
  readonly #services: Services;
  readonly #now: () => Date;
  readonly #state: ServerState;
  readonly #stored = new LruCache<StoredAnswer>({
    maxEntries: STORED_ANSWERS,
    maxWeight: STORED_ANSWER_BYTES,
    weigh: (answer) => answer.rendered.body.byteLength + 512,
  });
  /** fastify's logger, known once fastify is built (the lane is built before it). */
  log: FastifyBaseLogger | undefined;

  constructor(services: Services, now: () => Date, state: ServerState) {
    this.#services = services;
    this.#now = now;
    this.#state = state;
  }

  /** A node:http request handler: the lane first, `fallback` (fastify) for what it declines. */
  handler(fallback: NodeHandler): NodeHandler {
    return (request, response) => {
      const url = request.url ?? '';
      if (
        (request.method !== 'GET' && request.method !== 'HEAD') ||
        !url.startsWith('/tiles/v3/') ||
        // Encoded characters and `+` mean decoding, which stays fastify's: the lane compares raw text.
        url.includes('%') ||
        url.includes('+') ||
        this.#state.draining
      ) {
        fallback(request, response);
        return;
      }
      const stored = this.#stored.get(url);
      const takenNow = stored && this.#takeStoredNow(url, stored, rawHeader(request, 'x-request-id'));
      const failed = (error: unknown) => {
        this.log?.error({ err: error }, 'tile lane failed');
        response.destroy();
      };
      if (takenNow) {
        // Answered before this returns unless the rate limit has to ask the primary for a lease.
        this.#answer(request, response, takenNow).catch(failed);
        return;
      }
      (stored ? this.#takeStored(request, url, stored) : takeRequest(this.#services, this.#now, request, url))
        .then(
          (taken) => (taken ? this.#answer(request, response, taken) : fallback(request, response)),
          // A failure while deciding (the catalogue unreadable, say) is fastify's to answer and log.
          () => fallback(request, response),
        )
        .catch(failed);
    };
  }

  /**
   * The socket lane's answerer (socket-lane.ts): a remembered tile whose key is valid and within
   * its rate limit, all known without waiting, answered as #answer would answer it; otherwise
   * undefined, and the request goes the usual way, with nothing counted.
   */
  answerFromSocket(head: RequestHead): SocketAnswer | undefined {
    if (this.#state.draining) return undefined;
    const stored = this.#stored.get(head.target);
    const taken = stored && this.#takeStoredNow(head.target, stored, head.xRequestId);
    if (!taken) return undefined;
    const { account, keyId } = taken.caller;
    const now = this.#now();
    const decision = this.#services.rateLimiter.takeNow(keyId, account.tileRateLimit, account.tileRateInterval, now);
    if (!decision?.allowed) return undefined;
    const headers: string[] = ['x-request-id', taken.requestId, ...STANDARD_HEADERS];
    const timings = [`catalogue;dur=${taken.catalogueMs.toFixed(2)}`];
    headers.push(...rateLimitPairs(decision));
    const { etag, rendered, keyInUrl, maxAge } = taken.stored as StoredAnswer;
    const cacheControl = cacheControlOf(keyInUrl !== undefined, maxAge);
    let status = 304;
    let body: Buffer | undefined;
    if (matchesIfNoneMatch(head.ifNoneMatch, etag)) notModified(headers, etag, cacheControl);
    else {
      status = 200;
      body = rendered.body;
      timings.push('render;dur=0.00');
      this.#tile(headers, timings, etag, cacheControl, rendered, account.id, now);
    }
    const durationMs = completeHeaders(headers, timings, taken, body, 'lane;dur=0, socket;dur=0');
    this.#logAccess('GET', head.target, taken.requestId, status, durationMs);
    return { status, headers, body };
  }

  /** #takeStored when everything it checks is known without waiting; undefined otherwise. */
  #takeStoredNow(url: string, stored: StoredAnswer, incomingId: string | undefined): Taken | undefined {
    const started = performance.now();
    const { accounts, tiles } = this.#services;
    const marker = tiles.candidates.markerNow();
    if (marker === undefined || marker !== stored.catalogueMarker) return undefined;
    if (stored.day !== undefined && stored.day !== utcDate(this.#now())) return undefined;
    const caller = accounts.verifiedApiKey(stored.keyInUrl as string);
    return caller && storedTaken(incomingId, url, stored, caller, started);
  }

  /** A repeat of a remembered request: still valid, with a key still valid, or taken afresh. */
  async #takeStored(request: IncomingMessage, url: string, stored: StoredAnswer): Promise<Taken | undefined> {
    const started = performance.now();
    const { accounts, tiles } = this.#services;
    const current =
      stored.catalogueMarker === (await tiles.candidates.marker()) &&
      (stored.day === undefined || stored.day === utcDate(this.#now()));
    const caller = current ? await accounts.lookupApiKey(stored.keyInUrl as string) : undefined;
    if (!caller) {
      this.#stored.delete(url);
      return takeRequest(this.#services, this.#now, request, url);
    }
    return storedTaken(rawHeader(request, 'x-request-id'), url, stored, caller, started);
  }

  async #answer(request: IncomingMessage, response: ServerResponse, taken: Taken): Promise<void> {
    const { account, keyId } = taken.caller;
    // Name, value, name, value...: what writeHead takes with the least work per header.
    const headers: string[] = ['x-request-id', taken.requestId, ...STANDARD_HEADERS];
    const timings = [`catalogue;dur=${taken.catalogueMs.toFixed(2)}`];
    try {
      const now = this.#now();
      const { rateLimiter } = this.#services;
      const { tileRateLimit: limit, tileRateInterval: interval } = account;
      const decision =
        rateLimiter.takeNow(keyId, limit, interval, now) ?? (await rateLimiter.take(keyId, limit, interval, now));
      headers.push(...rateLimitPairs(decision));
      if (!decision.allowed) throw rateLimited(decision, account.tileRateInterval);
      const { ask } = taken;
      const cacheControl = cacheControlOf(ask.keyInUrl !== undefined, ask.maxAge);
      const etag = taken.stored?.etag ?? etagOf(taken.memo as MemoPlan, ask.type, ask.format);
      if (matchesIfNoneMatch(rawHeader(request, 'if-none-match'), etag)) {
        notModified(headers, etag, cacheControl);
        this.#send(request, response, 304, headers, timings, taken, undefined);
        return;
      }
      const rendering = performance.now();
      const rendered = taken.stored?.rendered ?? (await this.#render(request, taken, etag));
      timings.push(`render;dur=${(performance.now() - rendering).toFixed(2)}`);
      if (!rendered) {
        headers.push('cache-control', cacheControl);
        throw noImagery(ask.tile);
      }
      this.#tile(headers, timings, etag, cacheControl, rendered, account.id, now);
      this.#send(request, response, 200, headers, timings, taken, rendered.body, rendered.release);
    } catch (error) {
      // Nobody is listening: nothing to answer, and not a server fault worth an error line.
      if (request.socket.destroyed) return;
      const failure = failureFromError(error, taken.requestId);
      // As fastify's error handler does (error-handling.ts): the cause of a 500 goes to the log only.
      if (failure.body.code === 'INTERNAL')
        this.log?.error({ requestId: taken.requestId, err: error }, 'request failed');
      else if (failure.status >= 500)
        this.log?.warn({ requestId: taken.requestId, code: failure.body.code }, failure.body.error);
      headers.push(...Object.entries(failure.headers).flat(), 'content-type', JSON_TYPE);
      this.#send(request, response, failure.status, headers, timings, taken, Buffer.from(JSON.stringify(failure.body)));
    }
  }

  async #render(request: IncomingMessage, taken: Taken, etag: string): Promise<RenderedTile | undefined> {
    const socket = request.socket;
    const { memo, ask } = taken;
    const rendered = await this.#services.tiles.renderer.render(
      (memo as MemoPlan).plan,
      ask.format,
      rotationFor(ask.type),
      () => socket.destroyed,
    );
    if (rendered?.passThrough && ask.keyInUrl !== undefined) this.#stored.set(taken.url, { ...ask, etag, rendered });
    return rendered;
  }

  #send(
    request: IncomingMessage,
    response: ServerResponse,
    status: number,
    headers: string[],
    timings: string[],
    taken: Taken,
    body: Buffer | undefined,
    /** The body's buffer may be reused once the answer is sent: 'finish', never earlier. */
    release?: () => void,
  ): void {
    const durationMs = completeHeaders(headers, timings, taken, body, 'lane;dur=0');
    response.writeHead(status, headers);
    if (release) response.once('finish', release);
    response.end(body);
    this.#logAccess(request.method, request.url, taken.requestId, status, durationMs);
  }

  /** The tile's own headers and timings, and its count for `nadir accounts usage`. */
  #tile(
    headers: string[],
    timings: string[],
    etag: string,
    cacheControl: string,
    rendered: RenderedTile,
    accountId: string,
    now: Date,
  ): void {
    timings.push(rendered.passThrough ? 'passthrough;dur=0' : 'composite;dur=0');
    this.#services.tileUsage.count(accountId, usageMonthOf(now));
    headers.push('etag', etag, 'cache-control', cacheControl, 'content-type', rendered.contentType);
    headers.push('x-survey-ids', rendered.surveyIds.join(','));
  }

  /** The access-log line of request-lifecycle.ts, for the requests fastify never sees. */
  #logAccess(method: string | undefined, url = '', requestId: string, statusCode: number, durationMs: number): void {
    if (!this.log || !accessLogEnabled(this.log)) return;
    this.log.info(
      { requestId, method, url: redactUrl(url), statusCode, durationMs: Number(durationMs.toFixed(2)) },
      'request',
    );
  }
}
