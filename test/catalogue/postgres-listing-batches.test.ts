/**
 * Coverage searches on PostgreSQL: those begun in the same turn of the event loop reach the
 * database as one statement per 8 (src/catalogue/postgres-listing-batches.ts), each still given
 * its own answer. pg_stat_statements, on a real server, counts what arrived.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SurveySearch } from '../../src/catalogue/catalogue.js';
import { MOST_SEARCHES_A_STATEMENT } from '../../src/catalogue/postgres-listing-batches.js';
import { openStores, type Stores } from '../../src/stores/open-stores.js';
import { testClock } from '../support/clock.js';
import { type PostgresServer, SKIP_POSTGRES, startPostgres } from '../support/servers.js';
import { box, rectFootprint, survey } from './helpers.js';

describe('coverage searches batched on PostgreSQL', { skip: SKIP_POSTGRES, timeout: 60_000 }, () => {
  let postgres: PostgresServer;
  let stores: Stores;

  before(async () => {
    postgres = await startPostgres({ shared_preload_libraries: 'pg_stat_statements' });
    const url = await postgres.createDatabase('batches');
    await postgres.psql('batches', 'CREATE EXTENSION pg_stat_statements');
    stores = await openStores({ engine: 'postgres', url, connections: 4 }, testClock('2030-01-01T00:00:00Z').now);
    // Ten surveys side by side, 0.01 degrees wide, overlapping their neighbours by half.
    for (let i = 0; i < 10; i++) {
      const x = 10 + i * 0.005;
      await stores.catalogue.put(
        survey(`s${i}`, {
          footprint: rectFootprint(box(x, 44, x + 0.01, 44.01)),
          types: i % 2 === 0 ? ['Vert', 'TrueOrtho'] : ['Vert'],
        }),
      );
    }
  });
  after(async () => {
    await stores?.close();
    await postgres?.stop();
  });

  /** The 24 coverage searches: points along the row of surveys, some asking for TrueOrtho. */
  const searches: SurveySearch<'listing'>[] = Array.from({ length: 24 }, (_, i) => {
    const x = 10.001 + i * 0.0025;
    return {
      area: box(x, 44.004, x + 0.0001, 44.0041),
      limit: 100,
      offset: 0,
      view: 'listing',
      ...(i % 3 === 0 ? { types: ['TrueOrtho' as const] } : {}),
    };
  });

  /** Statements that reached the database since the last reset: single searches and batches. */
  async function statements(): Promise<{ single: number; batched: number }> {
    const count = async (name: string) =>
      Number(
        await postgres.psql(
          'batches',
          `SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE strpos(query, '${name}(') > 0`,
        ),
      );
    return { single: await count('nadir_listing_candidates'), batched: await count('nadir_listing_candidates_batch') };
  }

  it('a burst of 24 arrives as 3 statements of 8, each search answered as if asked alone', async () => {
    const alone = [];
    for (const search of searches) alone.push(await stores.catalogue.search(search));
    assert.ok(alone.some((page) => page.total >= 2) && alone.some((page) => page.total === 1), 'answers differ');
    await postgres.psql('batches', 'SELECT pg_stat_statements_reset()');
    const together = await Promise.all(searches.map((search) => stores.catalogue.search(search)));
    assert.equal(MOST_SEARCHES_A_STATEMENT, 8);
    assert.deepEqual(await statements(), { single: 0, batched: 3 });
    assert.deepEqual(together, alone);
  });

  it('a search alone goes as one search', async () => {
    await postgres.psql('batches', 'SELECT pg_stat_statements_reset()');
    for (const search of searches.slice(0, 5)) await stores.catalogue.search(search);
    assert.deepEqual(await statements(), { single: 5, batched: 0 });
  });
});
