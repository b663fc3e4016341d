/**
 * The metrics' seams one by one, without a server: the database guard's calls (engine-guard.ts's
 * onCall), queued ingest's jobs and queue (nadir worker), and the caches' lookups (lru.ts). Each
 * is driven through the real part, on injected monotonic time where time matters.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LruCache } from '../../src/cache/lru.js';
import { EngineGuard } from '../../src/db/engine-guard.js';
import type { QueuedSurvey } from '../../src/ingest/ingest-queue.js';
import { IngestMetrics } from '../../src/metrics/ingest-metrics.js';
import { databaseCalls } from '../../src/metrics/measured-parts.js';
import { NadirMetrics } from '../../src/metrics/nadir-metrics.js';

/** The series of a scrape that start with `prefix`, as `name{labels} value` lines. */
async function lines(registry: { metrics(): Promise<string> }, prefix: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line.startsWith(prefix));
}

describe('database calls through the outage guard', () => {
  test('each round trip is counted by result and timed; none is left in flight', async () => {
    const metrics = new NadirMetrics();
    let now = 1_000;
    const guard = new EngineGuard({
      engine: 'PostgreSQL',
      code: 'DATABASE_UNAVAILABLE',
      timeoutMs: 60_000,
      failuresToOpen: 1,
      openMs: 5_000,
      isUnavailable: (error) => (error as Error).message === 'gone',
      monotonic: () => now,
      onCall: databaseCalls(metrics),
    });
    const answered = guard.run(async () => {
      assert.deepEqual(await lines(metrics.registry, 'nadir_database_queries_in_flight '), [
        'nadir_database_queries_in_flight 1',
      ]);
      now += 40;
      return 'rows';
    });
    assert.equal(await answered, 'rows');
    await assert.rejects(guard.run(async () => Promise.reject(new Error('syntax'))));
    await assert.rejects(guard.run(async () => Promise.reject(new Error('gone'))));
    // The breaker is open now: refused at once, also unavailable.
    await assert.rejects(guard.run(async () => 'never'));
    assert.deepEqual(await lines(metrics.registry, 'nadir_database_queries_total'), [
      'nadir_database_queries_total{result="ok"} 1',
      'nadir_database_queries_total{result="error"} 1',
      'nadir_database_queries_total{result="unavailable"} 2',
    ]);
    assert.deepEqual(await lines(metrics.registry, 'nadir_database_queries_in_flight '), [
      'nadir_database_queries_in_flight 0',
    ]);
    const histogram = await lines(metrics.registry, 'nadir_database_query_duration_seconds');
    assert.ok(histogram.includes('nadir_database_query_duration_seconds_count 4'));
    assert.ok(histogram.includes('nadir_database_query_duration_seconds_bucket{le="0.025"} 3'), histogram.join('\n'));
    assert.ok(histogram.includes('nadir_database_query_duration_seconds_bucket{le="0.05"} 4'));
  });
});

describe('queued ingest (nadir worker)', () => {
  test("the worker's jobs by result, those running, and the queue by state with its progress", async () => {
    let surveys: QueuedSurvey[] = [
      { survey: 'a', version: 1, waiting: 3, active: 1, done: 4, failed: 0 },
      { survey: 'b', version: 2, waiting: 0, active: 1, done: 0, failed: 1 },
    ];
    const metrics = new IngestMetrics({ status: async () => surveys });
    metrics.job({ state: 'started', label: 'x', seconds: 0 });
    metrics.job({ state: 'started', label: 'y', seconds: 0 });
    metrics.job({ state: 'started', label: 'z', seconds: 0 });
    metrics.job({ state: 'done', label: 'x', seconds: 12 });
    metrics.job({ state: 'failed', label: 'y', seconds: 3, error: 'no such file' });
    assert.deepEqual(await lines(metrics.registry, 'nadir_ingest_jobs'), [
      'nadir_ingest_jobs_total{result="done"} 1',
      'nadir_ingest_jobs_total{result="failed"} 1',
      'nadir_ingest_jobs_running 1',
      'nadir_ingest_jobs{state="waiting"} 3',
      'nadir_ingest_jobs{state="running"} 2',
      'nadir_ingest_jobs{state="done"} 4',
      'nadir_ingest_jobs{state="failed"} 1',
    ]);
    assert.deepEqual(await lines(metrics.registry, 'nadir_ingest_progress_ratio'), ['nadir_ingest_progress_ratio 0.4']);
    // The next scrape asks the queue again.
    surveys = [];
    assert.deepEqual(await lines(metrics.registry, 'nadir_ingest_progress_ratio'), ['nadir_ingest_progress_ratio 1']);
    assert.ok((await metrics.registry.metrics()).includes('nadir_ingest_job_duration_seconds_count 2'));
  });
});

describe('cache figures', () => {
  test('an LRU cache counts its hits and misses and says what it holds', () => {
    const cache = new LruCache<Buffer>({ maxEntries: 2, weigh: (value) => value.byteLength });
    cache.set('a', Buffer.alloc(10));
    cache.get('a');
    cache.get('a');
    cache.get('b');
    assert.deepEqual(cache.stats, { entries: 1, weight: 10, hits: 2, misses: 1 });
  });
});
