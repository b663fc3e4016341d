/**
 * The coverage lane: coverage requests answered before fastify, as the tile lane answers tiles
 * (tile-lane.ts), with the route's own parts (authentication, coverage-request.ts, the page cache
 * and the token codec). A coverage answer is a few hundred microseconds of work, and fastify's
 * routing, hooks and reply machinery were a third of it (docs/benchmarks-coverage.md).
 *
 * It takes a request only when it is sure to read it as the route would: a GET of the exact path,
 * whose query needs no decoding and repeats no declared parameter, passes the route's schema
 * (fastify's own compiled check of it, after the numbers are converted as for the route),
 * parses without complaint, and whose key is valid for an account with the raster subscription. Anything else (every 4xx, shutdown) goes to fastify
 * untouched. Once taken, the answer is the route's, byte for byte in its body, with the headers
 * fastify's hooks would add; Server-Timing also says `lane`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { ApiKeyLookup } from '../../accounts/index.js';
import type { Clock } from '../../clock.js';
import type { CoverageAnswers } from '../../coverage/coverage-answers.js';
import { type CoverageQueryString, type CoverageRequest, parseCoverageQuery } from '../../coverage/coverage-request.js';
import { coverageBodyTail } from '../../coverage/survey-json.js';
import { utcDate } from '../../geo/dates.js';
import type { TokenCodec } from '../../tokens/index.js';
import { type ApiKeyVerifier, apiKeyOf } from '../http/auth.js';
import { answerToFailure, JSON_TYPE } from '../http/error-handling.js';
import type { NodeHandler } from '../http/http-server.js';
import { type Lane, laneHandler } from '../http/lane-entrance.js';
import { convertNumbers, plainQuery, type QuerySchema } from '../http/query-params.js';
import { rawHeader } from '../http/raw-header.js';
import { logAccess, requestIdOf, serverTiming, standardHeaderPairs } from '../http/request-lifecycle.js';
import type { ServerState } from '../http/server-state.js';
import { COVERAGE_PATH } from './coverage-route.js';
import { CoverageQuerySchema } from './coverage-schema.js';

export interface CoverageLaneParts {
  keys: ApiKeyVerifier;
  answers: Pick<CoverageAnswers, 'page'>;
  tokens: Pick<TokenCodec, 'issue'>;
  clock: Clock;
  state: ServerState;
}

const DECLARED: ReadonlySet<string> = new Set(Object.keys(CoverageQuerySchema.properties));
const PROPERTIES = CoverageQuerySchema.properties as QuerySchema['properties'];
/** A request the lane has taken: every check fastify and the route make before the search has passed. */
interface Taken {
  started: number;
  requestId: string;
  query: CoverageRequest;
  caller: ApiKeyLookup;
  authMs: number;
}

export class CoverageLane implements Lane<Taken> {
  readonly #parts: CoverageLaneParts;
  /** Known once fastify is built (the lane is built before it, as part of its server's request handler). */
  log: FastifyBaseLogger | undefined;
  /**
   * The route's query schema as fastify compiled it, known once fastify is ready: the lane takes
   * only what the route would validate, by the very same check.
   */
  checkQuery: ((query: unknown) => boolean) | undefined;

  constructor(parts: CoverageLaneParts) {
    this.#parts = parts;
  }

  readonly name = 'coverage lane';

  /** A node:http request handler: the lane first, `fallback` for what it declines. */
  handler(fallback: NodeHandler): NodeHandler {
    return laneHandler(this, fallback);
  }

  wants(method: string | undefined, url: string): boolean {
    return (
      method === 'GET' &&
      url.startsWith(COVERAGE_PATH) &&
      (url.length === COVERAGE_PATH.length || url.charCodeAt(COVERAGE_PATH.length) === 63) // '?'
    );
  }

  async take(request: IncomingMessage, url: string): Promise<Taken | undefined> {
    const started = performance.now();
    if (!this.log || !this.checkQuery || this.#parts.state.draining) return undefined;
    const search: Record<string, unknown> | undefined = plainQuery(url.slice(COVERAGE_PATH.length + 1), DECLARED);
    if (!search) return undefined;
    convertNumbers(search, PROPERTIES);
    if (!this.checkQuery(search)) return undefined;
    const key = apiKeyOf(search.apikey as string | undefined, rawHeader(request, 'authorization', true));
    const caller = key === undefined ? undefined : await this.#parts.keys.lookupApiKey(key);
    if (!caller?.account.rasterSubscription) return undefined;
    const authMs = performance.now() - started;
    let query: CoverageRequest;
    try {
      query = parseCoverageQuery(search as unknown as CoverageQueryString, () => utcDate(this.#parts.clock()));
    } catch {
      return undefined;
    }
    return { started, requestId: requestIdOf(rawHeader(request, 'x-request-id')), query, caller, authMs };
  }

  async answer(request: IncomingMessage, response: ServerResponse, taken: Taken): Promise<void> {
    const { query, caller } = taken;
    const headers = standardHeaderPairs(taken.requestId);
    const timings = [serverTiming('auth', taken.authMs)];
    let status = 200;
    // A page's body is its remembered head (bytes, written as they are) and this request's tail.
    let head: Buffer | undefined;
    let text: string;
    const searched = performance.now();
    try {
      const page = await this.#parts.answers.page(query);
      timings.push(serverTiming('catalogue', performance.now() - searched));
      const { token } = this.#parts.tokens.issue({ accountId: caller.account.id, keyId: caller.keyId, aoi: query.aoi });
      // As the route: the body holds a credential, no shared cache may keep it.
      headers.push('cache-control', 'no-store', 'content-type', JSON_TYPE);
      head = page.bodyHead;
      text = coverageBodyTail(token);
    } catch (error) {
      if (request.socket.destroyed) return;
      timings.push(serverTiming('catalogue', performance.now() - searched));
      const log = (this.log as FastifyBaseLogger).child({ requestId: taken.requestId });
      const failure = answerToFailure(error, taken.requestId, log);
      status = failure.status;
      headers.push(...Object.entries(failure.headers).flat(), 'content-type', JSON_TYPE);
      text = JSON.stringify(failure.body);
    }
    const durationMs = performance.now() - taken.started;
    // Which entrance answered, for people (and benchmarks) reading Server-Timing.
    timings.push('lane;dur=0', serverTiming('total', durationMs));
    const length = (head?.length ?? 0) + Buffer.byteLength(text);
    headers.push('server-timing', timings.join(', '), 'content-length', String(length));
    // Shutdown began while it searched: as fastify's onSend hook, so close() need not wait for
    // this keep-alive connection's idle timeout.
    if (this.#parts.state.draining) headers.push('connection', 'close');
    response.writeHead(status, headers);
    // Both parts go out in one writev: node:http corks the socket until the next tick.
    if (head) response.write(head);
    response.end(text);
    logAccess(this.log as FastifyBaseLogger, {
      requestId: taken.requestId,
      method: request.method,
      url: request.url ?? '',
      statusCode: status,
      durationMs,
    });
  }
}
