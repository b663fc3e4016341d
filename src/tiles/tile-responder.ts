/**
 * The tile core: one implementation of everything a tile answer depends on, whichever way the
 * request came in (the fastify routes, the tile lane before them: both thin adapters in
 * src/api/tiles). The steps follow linz/basemaps' `tile.xyz.raster.ts`:
 *
 *   admit (rate limit) -> assets (candidates) -> pure plan -> ETag / not modified -> compose ->
 *   count -> answer
 *
 * A parsed TileQuery in, `{status, headers, body, release}` out. What fails after admission throws
 * a TileFailure that carries the headers its answer still needs (the rate limit, Cache-Control on
 * an empty tile); the adapters shape the error itself through the one error table.
 *
 * `admit` and `answer` decide at once, without a promise, when all they need is at hand (a rate
 * limit counted in memory, a remembered pass-through tile): a map's repeated tiles are answered in
 * the same synchronous step as node:http handed over their request (docs/tiles.md says what the
 * promises and their turns of the microtask queue cost there). Callers `await` either.
 */
import { performance } from 'node:perf_hooks';
import type { ApiKeyLookup } from '../accounts/index.js';
import { usageMonthOf } from '../accounts/index.js';
import { Doorkeeper } from '../cache/doorkeeper.js';
import { type CacheStats, LruCache } from '../cache/lru.js';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import { surveyMatches } from '../catalogue/survey-filters.js';
import type { Clock } from '../clock.js';
import type { Decided } from '../decided.js';
import { NadirError } from '../errors.js';
import type { RateDecision, RateLimiter } from '../limits/rate-limiter.js';
import { rotationFor } from './panorama.js';
import { freshPlan, type MemoPlan } from './plan-memo.js';
import { candidateOf } from './tile-candidates.js';
import type { TileEngine } from './tile-engine.js';
import {
  cacheControlOf,
  etagOf,
  LOCATION_MAX_AGE,
  matchesIfNoneMatch,
  noImagery,
  rateLimited,
  rateLimitPairs,
  SURVEY_MAX_AGE,
} from './tile-headers.js';
import { type TileQuery, tileQueryKey } from './tile-query.js';
import type { RenderedTile } from './tile-renderer.js';

/** Headers as name, value, name, value...: what node's writeHead takes with the least work. */
export type HeaderPairs = string[];

/** A Server-Timing entry: a step's name and its milliseconds. */
export type Timing = [name: string, milliseconds: number];

export interface TileAnswer {
  status: 200 | 304;
  /** The tile's own headers (ETag, Cache-Control, and on a 200 Content-Type and X-Survey-Ids). */
  headers: HeaderPairs;
  body: Buffer | undefined;
  /** Call once the body has been sent (response 'finish'), never earlier: its buffer is reused. */
  release?: () => void;
  timings: Timing[];
}

/** A tile request that failed once admitted: `cause` for the error table, `headers` for the answer. */
export class TileFailure extends Error {
  readonly headers: HeaderPairs;
  readonly timings: Timing[];

  constructor(cause: unknown, headers: HeaderPairs, timings: Timing[] = []) {
    super('tile request failed', { cause });
    this.headers = headers;
    this.timings = timings;
  }
}

export interface TileConditions {
  /** The caller's If-None-Match header. */
  ifNoneMatch: string | undefined;
  /** The key came in the URL: a shared cache may then keep the tile (decisions.md). */
  keyInUrl: boolean;
  /** True once nobody waits for the answer (the client closed its connection). */
  abandoned: () => boolean;
}

export interface TileResponderParts {
  engine: TileEngine;
  surveys: Pick<SurveyCatalogue, 'get'>;
  rateLimiter: RateLimiter;
  /** Where served tiles are counted for `nadir accounts usage`. */
  usage: { count(accountId: string, month: string): void };
  clock: Clock;
  /** Told how each request ended, synchronously (metrics: src/metrics/); absent, nobody is. */
  observer?: TileObserver;
}

/** What a tile request came to: an answer (200 or 304), a refusal by the rate limit, a failure. */
export interface TileObserver {
  answered(answer: TileAnswer): void;
  refused(): void;
  failed(error: unknown): void;
}

/**
 * A pass-through answer remembered by its query. A map asks for the same tiles again and again, and
 * for a stored tile the candidates, the plan and the tile lookups cost more than sending it. Only
 * what the query and the catalogue decide is kept: admission (key and rate limit) is every
 * request's own, and an entry is dropped when the catalogue changes. Relative dates are resolved
 * in the key, so a new day is a new key. Composites are not kept: they are drawn.
 */
interface RememberedTile {
  catalogueMarker: string;
  etag: string;
  rendered: RenderedTile;
  /** X-Survey-Ids, joined once. */
  surveyIds: string;
}

/** A request's first step (#lookUp): what every answer to it shares, and its remembered tile, if any. */
interface LookUp {
  query: TileQuery;
  conditions: TileConditions;
  cacheControl: string;
  catalogueMarker: string;
  key: string;
  remembered: RememberedTile | undefined;
}

const REMEMBERED_TILES = 65_536;
/** The bodies are the stored-JPEG cache's own buffers; this bounds what is kept alive through them. */
const REMEMBERED_BYTES = 64 * 1024 * 1024;

function elapsed(since: number): number {
  return performance.now() - since;
}

export class TileResponder {
  readonly #engine: TileEngine;
  readonly #surveys: Pick<SurveyCatalogue, 'get'>;
  readonly #rateLimiter: RateLimiter;
  readonly #usage: TileResponderParts['usage'];
  readonly #clock: Clock;
  readonly #observer: TileObserver | undefined;
  readonly #remembered = new LruCache<RememberedTile>({
    maxEntries: REMEMBERED_TILES,
    maxWeight: REMEMBERED_BYTES,
    weigh: (tile) => tile.rendered.body.byteLength + 512,
  });
  /** A pass-through answer is remembered from its second request (doorkeeper.ts). */
  readonly #asked = new Doorkeeper(REMEMBERED_TILES);

  constructor(parts: TileResponderParts) {
    this.#engine = parts.engine;
    this.#surveys = parts.surveys;
    this.#rateLimiter = parts.rateLimiter;
    this.#usage = parts.usage;
    this.#clock = parts.clock;
    this.#observer = parts.observer;
  }

  /**
   * Counts one request of an authenticated caller against its key's rate limit, before anything
   * else is looked at (bad requests count too). Returns the X-RateLimit-* headers that every later
   * answer of the request carries, errors included; 429 beyond the limit.
   */
  admit(caller: ApiKeyLookup): Decided<HeaderPairs> {
    const { account, keyId } = caller;
    const limiter = this.#rateLimiter;
    const now = this.#clock();
    const decided = limiter.takeNow?.(keyId, account.tileRateLimit, account.tileRateInterval, now);
    if (decided) return this.#admitted(decided, caller);
    return limiter
      .take(keyId, account.tileRateLimit, account.tileRateInterval, now)
      .then((decision) => this.#admitted(decision, caller));
  }

  #admitted(decision: RateDecision, caller: ApiKeyLookup): HeaderPairs {
    const headers = rateLimitPairs(decision);
    if (!decision.allowed) {
      this.#observer?.refused();
      throw new TileFailure(rateLimited(decision, caller.account.tileRateInterval), headers);
    }
    return headers;
  }

  /**
   * The answer to an admitted caller: the tile (200) or 304; anything else fails with a
   * TileFailure (thrown when decided at once, else the promise's rejection).
   */
  answer(caller: ApiKeyLookup, query: TileQuery, conditions: TileConditions): Decided<TileAnswer> {
    const timings: Timing[] = [];
    let drawn: Promise<TileAnswer>;
    try {
      const started = performance.now();
      const step = this.#lookUp(query, conditions, timings, started);
      if (step.remembered) {
        const answer = this.#rememberedAnswer(caller, step, step.remembered, timings);
        this.#observer?.answered(answer);
        return answer;
      }
      drawn = this.#drawn(caller, query, step, timings, started);
    } catch (error) {
      throw this.#failed(error, timings);
    }
    return drawn.then(
      (answer) => {
        this.#observer?.answered(answer);
        return answer;
      },
      (error: unknown) => {
        throw this.#failed(error, timings);
      },
    );
  }

  #failed(error: unknown, timings: Timing[]): TileFailure {
    this.#observer?.failed(error instanceof TileFailure ? error.cause : error);
    return error instanceof TileFailure ? error : new TileFailure(error, [], timings);
  }

  /** What the query and the catalogue decide before any plan: Cache-Control, the key, a remembered answer. */
  #lookUp(query: TileQuery, conditions: TileConditions, timings: Timing[], started: number): LookUp {
    const maxAge = query.surveyId === undefined ? LOCATION_MAX_AGE : SURVEY_MAX_AGE;
    const cacheControl = cacheControlOf(conditions.keyInUrl, maxAge);
    const catalogueMarker = this.#engine.candidates.marker();
    const key = tileQueryKey(query);
    const held = this.#remembered.get(key);
    const remembered = held?.catalogueMarker === catalogueMarker ? held : undefined;
    if (remembered) timings.push(['catalogue', elapsed(started)]);
    return { query, conditions, cacheControl, catalogueMarker, key, remembered };
  }

  /** A remembered pass-through tile (or 304), as the drawn path below would answer it. */
  #rememberedAnswer(caller: ApiKeyLookup, step: LookUp, remembered: RememberedTile, timings: Timing[]): TileAnswer {
    const { etag, rendered } = remembered;
    const headers = ['etag', etag, 'cache-control', step.cacheControl];
    if (matchesIfNoneMatch(step.conditions.ifNoneMatch, etag))
      return { status: 304, headers, body: undefined, timings };
    // Nothing to draw: the stored tile is sent as it was remembered.
    timings.push(['render', 0], ['passthrough', 0]);
    return this.#served(caller, rendered, remembered.surveyIds, headers, timings);
  }

  async #drawn(caller: ApiKeyLookup, query: TileQuery, step: LookUp, timings: Timing[], started: number) {
    // An empty tile stays empty until the catalogue changes: its 404 may be cached as the tile would be.
    const empty = () => new TileFailure(noImagery(query.tile), ['cache-control', step.cacheControl], timings);
    let memo: MemoPlan;
    let etag: string;
    try {
      memo = await this.#plan(query);
      if (memo.plan.layers.length === 0) throw empty();
      etag = etagOf(memo, query.type, query.format);
    } finally {
      timings.push(['catalogue', elapsed(started)]);
    }
    const headers = ['etag', etag, 'cache-control', step.cacheControl];
    if (matchesIfNoneMatch(step.conditions.ifNoneMatch, etag))
      return { status: 304 as const, headers, body: undefined, timings };

    const rendering = performance.now();
    let rendered: RenderedTile | undefined;
    try {
      rendered = await this.#engine.renderer.render(
        memo.plan,
        query.format,
        rotationFor(query.type),
        step.conditions.abandoned,
      );
    } finally {
      timings.push(['render', elapsed(rendering)]);
    }
    if (!rendered) throw empty();
    const surveyIds = rendered.surveyIds.join(',');
    if (rendered.passThrough && this.#asked.secondSighting(step.key))
      this.#remembered.set(step.key, { catalogueMarker: step.catalogueMarker, etag, rendered, surveyIds });
    // Which path answered, for people (and benchmarks) reading Server-Timing.
    timings.push([rendered.passThrough ? 'passthrough' : 'composite', 0]);
    return this.#served(caller, rendered, surveyIds, headers, timings);
  }

  /** A 200: counted for the caller's usage, with the tile's own headers. */
  #served(
    caller: ApiKeyLookup,
    rendered: RenderedTile,
    surveyIds: string,
    headers: HeaderPairs,
    timings: Timing[],
  ): TileAnswer {
    this.#usage.count(caller.account.id, usageMonthOf(this.#clock()));
    headers.push('content-type', rendered.contentType, 'x-survey-ids', surveyIds);
    return { status: 200, headers, body: rendered.body, release: rendered.release, timings };
  }

  /** The remembered pass-through answers' figures, for metrics. */
  get answerCacheStats(): CacheStats {
    return this.#remembered.stats;
  }

  /** Location tiles: every matching survey in draw order; survey tiles: the one survey, if it matches. */
  async #plan(query: TileQuery): Promise<MemoPlan> {
    const { candidates, plans } = this.#engine;
    if (query.surveyId === undefined) return plans.plan(query.tile, await candidates.find(query.tile, query.filter));
    const survey = await this.#surveys.get(query.surveyId);
    if (!survey) throw new NadirError('SURVEY_NOT_FOUND', `No survey with id "${query.surveyId.slice(0, 64)}"`);
    const candidate = candidateOf(survey, query.type);
    if (!candidate) throw new NadirError('CONTENT_NOT_FOUND', `Survey ${survey.id} has no ${query.type} imagery`);
    return freshPlan(query.tile, surveyMatches(survey, query.filter) ? [candidate] : []);
  }
}
