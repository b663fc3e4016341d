/**
 * The tile lane: tile requests answered before fastify, over the same tile core as the routes
 * (src/tiles/tile-responder.ts). Map clients ask for tiles by the thousand, and for a stored tile
 * fastify's routing, hooks and reply machinery cost more than the answer (docs/tiles.md). node:http
 * has read the request as for any other: the lane only writes the answer with writeHead and end.
 *
 * It takes a request only when it is sure to read it as the routes would: a GET or HEAD whose path
 * fastify's own router matches to a tile route, whose query needs no decoding and repeats no
 * declared parameter, which the one tile parser reads without complaint, and whose key is valid.
 * Anything else (bad input, an unknown key, shutdown) goes to fastify untouched, before anything
 * is counted. Once taken, every outcome (the tile, 304, 404, 429, a failure) is the lane's to
 * answer, through the error table and with the headers fastify's hooks would add.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { ApiKeyLookup } from '../../accounts/index.js';
import type { Clock } from '../../clock.js';
import type { Decided } from '../../decided.js';
import { utcDate } from '../../geo/dates.js';
import { parseTileQuery, type TilePath, type TileQuery } from '../../tiles/tile-query.js';
import {
  type HeaderPairs,
  type TileAnswer,
  type TileConditions,
  TileFailure,
  type TileResponder,
  type Timing,
} from '../../tiles/tile-responder.js';
import { type ApiKeyVerifier, apiKeyOf, keyIsInUrl } from '../http/auth.js';
import { answerToFailure, JSON_TYPE } from '../http/error-handling.js';
import type { NodeHandler } from '../http/http-server.js';
import { type Lane, laneHandler } from '../http/lane-entrance.js';
import { plainQuery } from '../http/query-params.js';
import { rawHeader } from '../http/raw-header.js';
import { logAccess, requestIdOf, serverTiming, standardHeaderPairs } from '../http/request-lifecycle.js';
import type { ServerState } from '../http/server-state.js';
import { LocationTileQuerySchema, SurveyTileQuerySchema } from './tile-schema.js';

/** The path parameters of the tile route fastify's router finds for a path, if any. */
export type TileRouter = (path: string) => TilePath | undefined;

export interface TileLaneParts {
  keys: ApiKeyVerifier;
  tiles: TileResponder;
  clock: Clock;
  state: ServerState;
}

const LOCATION_PARAMETERS: ReadonlySet<string> = new Set(Object.keys(LocationTileQuerySchema.properties));
const SURVEY_PARAMETERS: ReadonlySet<string> = new Set(Object.keys(SurveyTileQuerySchema.properties));

interface LaneAnswer {
  status: number;
  headers: HeaderPairs;
  body: Buffer | undefined;
  timings: Timing[];
  release?: () => void;
}

/** A request the lane has taken: every check fastify would make before the handler has passed. */
interface Taken {
  started: number;
  requestId: string;
  query: TileQuery;
  caller: ApiKeyLookup;
  keyInUrl: boolean;
}

export class TileLane implements Lane<Taken> {
  readonly #parts: TileLaneParts;
  /** Known once fastify is built (the lane is built before it, as its server's request handler). */
  router: TileRouter | undefined;
  log: FastifyBaseLogger | undefined;

  constructor(parts: TileLaneParts) {
    this.#parts = parts;
  }

  readonly name = 'tile lane';

  /** A node:http request handler: the lane first, `fallback` (fastify) for what it declines. */
  handler(fallback: NodeHandler): NodeHandler {
    return laneHandler(this, fallback);
  }

  wants(method: string | undefined, url: string): boolean {
    return (method === 'GET' || method === 'HEAD') && url.startsWith('/tiles/v3/');
  }

  /** At once when the key is one the store has at hand, else once the store has looked it up. */
  take(request: IncomingMessage, url: string): Decided<Taken | undefined> {
    const started = performance.now();
    const { router, log } = this;
    if (!router || !log || this.#parts.state.draining) return undefined;
    const queryStart = url.indexOf('?');
    // Percent-encoded paths are fastify's to decode.
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    const params = path.includes('%') ? undefined : router(path);
    if (!params) return undefined;
    const declared = params.surveyId === undefined ? LOCATION_PARAMETERS : SURVEY_PARAMETERS;
    const search = plainQuery(queryStart === -1 ? '' : url.slice(queryStart + 1), declared);
    if (!search) return undefined;
    let query: TileQuery;
    try {
      query = parseTileQuery(params, search, () => utcDate(this.#parts.clock()));
    } catch {
      return undefined;
    }
    const key = apiKeyOf(search.apikey, rawHeader(request, 'authorization', true));
    if (key === undefined) return undefined;
    const taken = (caller: ApiKeyLookup | undefined): Taken | undefined => {
      if (!caller) return undefined;
      const requestId = requestIdOf(rawHeader(request, 'x-request-id'));
      return { started, requestId, query, caller, keyInUrl: keyIsInUrl(search.apikey) };
    };
    const { keys } = this.#parts;
    const known = keys.knownApiKey(key);
    return known ? taken(known) : keys.lookupApiKey(key).then(taken);
  }

  /**
   * At once when admission and the tile core decide at once (limits counted in memory, a
   * remembered tile); otherwise once they have. Either way one writeHead and end.
   */
  answer(request: IncomingMessage, response: ServerResponse, taken: Taken): Decided<void> {
    const headers = standardHeaderPairs(taken.requestId);
    let tile: Decided<TileAnswer>;
    try {
      tile = this.#tile(request, taken, headers);
    } catch (error) {
      this.#fail(request, response, taken, headers, error);
      return;
    }
    if (tile instanceof Promise) {
      return tile.then(
        (answer) => this.#sendTile(request, response, taken, headers, answer),
        (error: unknown) => this.#fail(request, response, taken, headers, error),
      );
    }
    this.#sendTile(request, response, taken, headers, tile);
  }

  /** Admission (its headers go onto `headers`), then the tile core's answer. */
  #tile(request: IncomingMessage, taken: Taken, headers: HeaderPairs): Decided<TileAnswer> {
    const { tiles } = this.#parts;
    const conditions: TileConditions = {
      ifNoneMatch: rawHeader(request, 'if-none-match'),
      keyInUrl: taken.keyInUrl,
      abandoned: () => request.socket.destroyed,
    };
    const admitted = tiles.admit(taken.caller);
    if (admitted instanceof Promise) {
      return admitted.then((pairs) => {
        headers.push(...pairs);
        return tiles.answer(taken.caller, taken.query, conditions);
      });
    }
    headers.push(...admitted);
    return tiles.answer(taken.caller, taken.query, conditions);
  }

  #sendTile(request: IncomingMessage, response: ServerResponse, taken: Taken, headers: HeaderPairs, tile: TileAnswer) {
    headers.push(...tile.headers);
    const { status, body, timings, release } = tile;
    this.#send(request, response, taken, { status, headers, body, timings, release });
  }

  #fail(request: IncomingMessage, response: ServerResponse, taken: Taken, headers: HeaderPairs, error: unknown) {
    // Nobody is listening: nothing to answer, and not a server fault worth an error line.
    if (request.socket.destroyed) return;
    const failed = error instanceof TileFailure ? error : new TileFailure(error, []);
    const log = (this.log as FastifyBaseLogger).child({ requestId: taken.requestId });
    const failure = answerToFailure(failed.cause, taken.requestId, log);
    headers.push(...failed.headers, ...Object.entries(failure.headers).flat(), 'content-type', JSON_TYPE);
    const body = Buffer.from(JSON.stringify(failure.body));
    this.#send(request, response, taken, { status: failure.status, headers, body, timings: failed.timings });
  }

  #send(request: IncomingMessage, response: ServerResponse, taken: Taken, answer: LaneAnswer): void {
    const { headers, body } = answer;
    const durationMs = performance.now() - taken.started;
    let timings = '';
    for (const [name, milliseconds] of answer.timings) timings += `${serverTiming(name, milliseconds)}, `;
    // Which entrance answered, for people (and benchmarks) reading Server-Timing.
    headers.push('server-timing', `${timings}lane;dur=0, ${serverTiming('total', durationMs)}`);
    if (body) headers.push('content-length', String(body.byteLength));
    response.writeHead(answer.status, headers);
    // The body's buffer may be reused once the answer is sent: 'finish', never earlier.
    if (answer.release) response.once('finish', answer.release);
    response.end(body);
    const log = this.log as FastifyBaseLogger;
    logAccess(log, {
      requestId: taken.requestId,
      method: request.method,
      url: request.url ?? '',
      statusCode: answer.status,
      durationMs,
    });
  }
}
