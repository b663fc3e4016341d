/**
 * nadir's Prometheus metrics: one registry per process (never prom-client's global one), built by
 * the composition root when NADIR_METRICS_PORT is set, with every family docs/operations.md
 * describes. Parts of the service are measured through seams (measured-parts.ts, http-metrics.ts)
 * that record into these; with metrics off there are no seams and nothing is recorded. What the
 * request path records is counted by series.ts, the rest is prom-client's own.
 *
 * Names follow Prometheus' conventions: `nadir_` prefix, units in the name (`_seconds`, `_bytes`),
 * `_total` on counters. Labels are bounded: route templates (never URLs), status codes, outcome and
 * backend names; no survey id, account or key is ever a label.
 */
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { CacheStats } from '../cache/lru.js';
import { DEFAULT_DATABASE_CONNECTIONS } from '../config/config.js';
import { FastCounter, FastHistogram } from './series.js';

/** Request latencies, s: a stored tile is a millisecond, an AOI render several seconds. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];
/** Storage reads and rate-limit round trips: from a page-cache hit to a slow bucket. */
const IO_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** What a tile answer was, for `nadir_tile_answers_total{outcome}`. */
export type TileOutcome = 'pass_through' | 'composite' | 'not_modified' | 'not_found' | 'rate_limited' | 'failed';

/** Gauges read at scrape time from parts that keep their own state (no cost per request). */
export interface MetricSources {
  /** The raster admission queue (raster/admission.ts). */
  rasterAdmission?: () => {
    inFlight: number;
    inFlightCost: number;
    queued: number;
    queuedCost: number;
    admitted: number;
    rejected: number;
  };
  /** The tile caches by name (answers, jpeg, pixels): what they hold and how their lookups went. */
  tileCaches?: () => Record<string, CacheStats>;
  /** Accounts billed this month at 90% of their allowance or more (measured-parts.ts). */
  allowanceNearlySpent?: () => number;
  /** The engines nadir cannot answer without, asked at each scrape (what /ready asks): redis only when configured. */
  engines?: { database: () => Promise<void>; redis?: () => Promise<void> };
}

export class NadirMetrics {
  readonly registry = new Registry();

  readonly httpRequests = new FastCounter(
    this.registry,
    'nadir_http_requests_total',
    'HTTP requests answered, by route template and status code (tile and coverage lanes included).',
  );
  readonly httpDuration = new FastHistogram(
    this.registry,
    'nadir_http_request_duration_seconds',
    'Time from the request reaching nadir to the last byte of its answer handed to the socket, by route template.',
    REQUEST_BUCKETS,
  );
  readonly tileAnswers = new FastCounter(
    this.registry,
    'nadir_tile_answers_total',
    'Tile answers by outcome: pass_through (a stored tile sent as it is), composite, not_modified (304), not_found (404), rate_limited (429), failed.',
  );
  readonly tileBytes = new FastCounter(
    this.registry,
    'nadir_tile_sent_bytes_total',
    'Bytes of tile bodies answered (200s).',
  );
  readonly storageRequests = new FastCounter(
    this.registry,
    'nadir_storage_requests_total',
    'Byte-range reads of survey files, by storage backend (local, s3, http) and result (ok, error).',
  );
  readonly storageBytes = new FastCounter(
    this.registry,
    'nadir_storage_read_bytes_total',
    'Bytes read from survey files, by storage backend.',
  );
  readonly storageDuration = new FastHistogram(
    this.registry,
    'nadir_storage_read_duration_seconds',
    'Latency of byte-range reads of survey files, by storage backend.',
    IO_BUCKETS,
  );
  readonly redisRoundTrips = new FastHistogram(
    this.registry,
    'nadir_redis_round_trip_duration_seconds',
    'Tile rate-limit decisions taken in Redis, one round trip each (absent without Redis).',
    IO_BUCKETS,
  );
  readonly rateLimitRefusals = new FastCounter(
    this.registry,
    'nadir_rate_limit_refusals_total',
    'Tile requests refused (429) because their key was over its rate limit.',
  );
  readonly redisFallbacks = new Counter({
    name: 'nadir_redis_fallbacks_total',
    help: 'Times Redis became unreachable and this process began counting rate limits alone.',
    registers: [this.registry],
  });
  readonly transactions = new FastCounter(
    this.registry,
    'nadir_billed_transactions_total',
    'Raster transactions recorded against an allowance: result billed (first download of a token), repeat (already billed) or exceeded (403).',
  );
  readonly databaseQueries = new FastCounter(
    this.registry,
    'nadir_database_queries_total',
    'PostgreSQL round trips (queries and transactions) by result: ok, error (refused by the server), unavailable (timed out, unreachable, or refused by the open breaker: a 503).',
  );
  readonly databaseDuration = new FastHistogram(
    this.registry,
    'nadir_database_query_duration_seconds',
    'Latency of PostgreSQL round trips (queries and transactions).',
    IO_BUCKETS,
  );
  /** PostgreSQL round trips under way (a number, read at scrape time: no cost per call). */
  databaseInFlight = 0;

  constructor() {
    // Event-loop lag, GC, heap, RSS, CPU and file descriptors: prom-client's own process metrics.
    collectDefaultMetrics({ register: this.registry, prefix: 'nadir_' });
    const metrics = this;
    new Gauge({
      name: 'nadir_database_queries_in_flight',
      help: `PostgreSQL round trips under way: the pool has NADIR_DATABASE_CONNECTIONS (default ${DEFAULT_DATABASE_CONNECTIONS}) per process, so more than that are waiting for one.`,
      registers: [this.registry],
      collect() {
        this.set(metrics.databaseInFlight);
      },
    });
  }

  /** Gauges read from `sources` at each scrape. */
  readAtScrape(sources: MetricSources): void {
    const { rasterAdmission, tileCaches, allowanceNearlySpent, engines } = sources;
    if (engines) {
      const up = (name: string, help: string, ping: () => Promise<void>) =>
        new Gauge({
          name,
          help,
          registers: [this.registry],
          // With `serve --workers`, 0 when any worker cannot reach it.
          aggregator: 'min',
          async collect() {
            this.set(
              await ping().then(
                () => 1,
                () => 0,
              ),
            );
          },
        });
      up(
        'nadir_database_up',
        'Whether the database answered a ping at this scrape (1) or not (0: requests that need it answer 503).',
        engines.database,
      );
      if (engines.redis) {
        up(
          'nadir_redis_up',
          'Whether Redis answered a ping at this scrape (1) or not (0: each process counts tile rate limits alone).',
          engines.redis,
        );
      }
    }
    if (allowanceNearlySpent) {
      new Gauge({
        name: 'nadir_accounts_allowance_nearly_spent',
        help: 'Accounts this server billed this month that have used 90% or more of their monthly allowance.',
        registers: [this.registry],
        // Workers may have billed the same account: the most any of them saw.
        aggregator: 'max',
        collect() {
          this.set(allowanceNearlySpent());
        },
      });
    }
    if (rasterAdmission) {
      const read = (pick: (stats: ReturnType<NonNullable<MetricSources['rasterAdmission']>>) => number) =>
        function (this: Gauge) {
          this.set(pick(rasterAdmission()));
        };
      new Gauge({
        name: 'nadir_raster_admission_in_flight',
        help: 'Imagery renders holding working memory now.',
        registers: [this.registry],
        collect: read((stats) => stats.inFlight),
      });
      new Gauge({
        name: 'nadir_raster_admission_queued',
        help: 'Imagery renders waiting for working memory (a 503 OVERLOADED after NADIR_RASTER_QUEUE_MS).',
        registers: [this.registry],
        collect: read((stats) => stats.queued),
      });
      new Gauge({
        name: 'nadir_raster_admission_reserved_bytes',
        help: 'Working memory reserved by renders in flight (state="in_flight") and asked for by queued ones (state="queued").',
        labelNames: ['state'],
        registers: [this.registry],
        collect() {
          const stats = rasterAdmission();
          this.set({ state: 'in_flight' }, stats.inFlightCost);
          this.set({ state: 'queued' }, stats.queuedCost);
        },
      });
      new Counter({
        name: 'nadir_raster_admissions_total',
        help: 'Imagery renders by admission result: admitted, or rejected (503 OVERLOADED after waiting too long).',
        labelNames: ['result'],
        registers: [this.registry],
        collect() {
          const stats = rasterAdmission();
          this.reset();
          this.inc({ result: 'admitted' }, stats.admitted);
          this.inc({ result: 'rejected' }, stats.rejected);
        },
      });
    }
    if (tileCaches) {
      new Counter({
        name: 'nadir_tile_cache_lookups_total',
        help: 'Lookups in the tile caches (answers: remembered pass-through answers; jpeg: stored tiles; pixels: decoded tiles; blocks: blocks of survey files from remote storage), by result hit or miss.',
        labelNames: ['cache', 'result'],
        registers: [this.registry],
        collect() {
          this.reset();
          for (const [cache, stats] of Object.entries(tileCaches())) {
            this.inc({ cache, result: 'hit' }, stats.hits);
            this.inc({ cache, result: 'miss' }, stats.misses);
          }
        },
      });
      new Gauge({
        name: 'nadir_tile_cache_bytes',
        help: 'Bytes each tile cache holds now.',
        labelNames: ['cache'],
        registers: [this.registry],
        collect() {
          for (const [cache, stats] of Object.entries(tileCaches())) this.set({ cache }, stats.weight);
        },
      });
    }
  }
}
