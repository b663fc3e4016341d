/**
 * The seams through which the service's parts are measured: observers a part calls (the tile
 * core's TileObserver, the database guard's onCall) and parts with a recorder around them
 * (storage, the rate limiter with Redis, billing). The composition root builds these only when
 * metrics are on; off, the parts get no observer and are themselves (nothing recorded, nothing
 * spent). The parts' own code knows nothing of Prometheus.
 */
import { performance } from 'node:perf_hooks';
import type { Source } from '@cogeotiff/core';
import type { AccountStore } from '../accounts/index.js';
import type { CallOutcome } from '../db/engine-guard.js';
import { NadirError } from '../errors.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { readsInto, type SurveyStorage } from '../storage/storage.js';
import type { TileObserver } from '../tiles/tile-responder.js';
import { delegateTo } from './delegate.js';
import type { NadirMetrics, TileOutcome } from './nadir-metrics.js';
import type { CounterSeries } from './series.js';

const NOT_FOUND_CODES: ReadonlySet<string> = new Set(['NO_IMAGERY', 'SURVEY_NOT_FOUND', 'CONTENT_NOT_FOUND']);

/** The tile core's observer (tile-responder.ts): each request's outcome counted, and the bytes sent. */
export function tileObserver(metrics: NadirMetrics): TileObserver {
  // Every outcome's series from the start (at 0): rate() over a series that appears only at its
  // first event misses that event.
  const series = (outcome: TileOutcome): CounterSeries => metrics.tileAnswers.series({ outcome });
  const passThrough = series('pass_through');
  const composite = series('composite');
  const notModified = series('not_modified');
  const notFound = series('not_found');
  const rateLimited = series('rate_limited');
  const failed = series('failed');
  const bytes = metrics.tileBytes.series();
  const refusals = metrics.rateLimitRefusals.series();
  return {
    answered(answer) {
      if (answer.status === 304) {
        notModified.value++;
        return;
      }
      // The tile core names the path that answered last in its timings (tile-responder.ts).
      (answer.timings.at(-1)?.[0] === 'passthrough' ? passThrough : composite).value++;
      bytes.value += answer.body?.byteLength ?? 0;
    },
    refused() {
      rateLimited.value++;
      refusals.value++;
    },
    failed(cause) {
      (cause instanceof NadirError && NOT_FOUND_CODES.has(cause.code) ? notFound : failed).value++;
    },
  };
}

/**
 * Rate-limit decisions timed: with Redis, each is a round trip (refusals are counted by the tile
 * core's observer). Only Redis is measured: in memory or leased from the primary, a decision is
 * microseconds, and its timing would cost more than it tells.
 */
export function measuredRateLimiter(limiter: RateLimiter, metrics: NadirMetrics): RateLimiter {
  const timer = metrics.redisRoundTrips.series();
  return {
    take(key, limit, intervalSeconds, now) {
      const started = performance.now();
      return limiter.take(key, limit, intervalSeconds, now).then((decision) => {
        timer.observe((performance.now() - started) / 1000);
        return decision;
      });
    },
    ping: () => limiter.ping(),
    close: () => limiter.close(),
  };
}

/** Survey-file reads (tile reads of COGs) counted, sized and timed by backend. */
export function measuredStorage(storage: SurveyStorage, backend: string, metrics: NadirMetrics): SurveyStorage {
  const ok = metrics.storageRequests.series({ backend, result: 'ok' });
  const failed = metrics.storageRequests.series({ backend, result: 'error' });
  const bytes = metrics.storageBytes.series({ backend });
  const timer = metrics.storageDuration.series({ backend });
  async function timed<T>(read: () => Promise<T>, size: (result: T) => number): Promise<T> {
    const started = performance.now();
    try {
      const result = await read();
      ok.value++;
      bytes.value += size(result);
      return result;
    } catch (error) {
      failed.value++;
      throw error;
    } finally {
      timer.observe((performance.now() - started) / 1000);
    }
  }
  const measuredSource = (source: Source): Source => {
    const measured: Source & { fetchInto?: (offset: number, into: Uint8Array) => Promise<number> } = {
      url: source.url,
      get metadata() {
        return source.metadata;
      },
      fetch: (offset, length, options) =>
        timed(
          () => source.fetch(offset, length, options),
          (buffer) => buffer.byteLength,
        ),
      close: source.close ? () => source.close?.() ?? Promise.resolve() : undefined,
    };
    // The tile reader reads local files straight into its own buffer (storage.ts): keep that.
    if (readsInto(source)) {
      measured.fetchInto = (offset, into) =>
        timed(
          () => source.fetchInto(offset, into),
          (count) => count,
        );
    }
    return measured;
  };
  return { ...delegateTo(storage), source: (location: string) => measuredSource(storage.source(location)) };
}

/** At or above this share of its monthly allowance, an account is nearly out (the alert's gauge). */
const NEARLY_SPENT = 0.9;

/**
 * Billed transactions counted by result (the allowance check's answer), and the accounts this
 * process has billed this month that are at 90% of their allowance or more (ids kept in memory,
 * never as labels; one usage read after each new transaction, which are seconds of rendering apart).
 */
export function measuredAccounts(accounts: AccountStore, metrics: NadirMetrics): AccountStore {
  const billed = metrics.transactions.series({ result: 'billed' });
  const repeat = metrics.transactions.series({ result: 'repeat' });
  const exceeded = metrics.transactions.series({ result: 'exceeded' });
  let current = '';
  const nearlySpent = new Set<string>();
  metrics.readAtScrape({ allowanceNearlySpent: () => nearlySpent.size });
  return {
    ...delegateTo(accounts),
    async recordTransaction(tokenId: string, accountId: string, month: string, allowance: number) {
      const result = await accounts.recordTransaction(tokenId, accountId, month, allowance);
      (result.exceeded ? exceeded : result.billed ? billed : repeat).value++;
      if (result.billed || result.exceeded) {
        const usage = await accounts.monthUsage(accountId, month).catch(() => undefined);
        if (month !== current) {
          current = month;
          nearlySpent.clear();
        }
        if (result.exceeded || (usage && usage.transactions >= NEARLY_SPENT * allowance)) nearlySpent.add(accountId);
      }
      return result;
    },
  };
}

/** The database guard's onCall (engine-guard.ts): round trips counted, timed and held in flight. */
export function databaseCalls(metrics: NadirMetrics): () => (outcome: CallOutcome, ms: number) => void {
  const results = {
    ok: metrics.databaseQueries.series({ result: 'ok' }),
    error: metrics.databaseQueries.series({ result: 'error' }),
    unavailable: metrics.databaseQueries.series({ result: 'unavailable' }),
  };
  const duration = metrics.databaseDuration.series();
  const ended = (outcome: CallOutcome, ms: number) => {
    metrics.databaseInFlight--;
    results[outcome].value++;
    duration.observe(ms / 1000);
  };
  return () => {
    metrics.databaseInFlight++;
    return ended;
  };
}
