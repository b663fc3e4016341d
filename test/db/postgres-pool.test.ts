import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_DATABASE_CONNECTIONS } from '../../src/config/config.js';
import { openStores } from '../../src/stores/open-stores.js';
import { testClock } from '../support/clock.js';
import { type PostgresServer, SKIP_POSTGRES, startPostgres } from '../support/servers.js';

/**
 * NADIR_DATABASE_CONNECTIONS bounds the backends one process keeps busy on the database: a fleet
 * sizes it to the database's cores (docs/deploy.md), and requests beyond it wait in the pool.
 */
describe('PostgreSQL pool size', { skip: SKIP_POSTGRES, timeout: 60_000 }, () => {
  let postgres: PostgresServer | undefined;
  before(async () => {
    postgres = await startPostgres();
  });
  after(async () => {
    await postgres?.stop();
  });

  /** Client backends on `name` once `asks` searches were asked at once through stores with `connections`. */
  async function backendsAfterBurst(name: string, connections: number | undefined, asks: number) {
    const server = postgres as PostgresServer;
    const url = await server.createDatabase(name);
    const stores = await openStores({ engine: 'postgres', url, connections }, testClock('2030-01-01T00:00:00Z').now);
    try {
      const area = { minX: 0, minY: 0, maxX: 1000, maxY: 1000 };
      // Dated: a statement each (coverage's undated listings of one turn would share one).
      const search = { area, limit: 10, offset: 0, view: 'listing' as const, since: '2020-01-01' };
      await Promise.all(Array.from({ length: asks }, () => stores.catalogue.search(search)));
      const count = await server.psql(
        'postgres',
        `SELECT count(*) FROM pg_stat_activity WHERE datname = '${name}' AND backend_type = 'client backend' AND query NOT ILIKE '%LISTEN%'`,
      );
      return Number(count.trim());
    } finally {
      await stores.close();
    }
  }

  it('opens no more connections than NADIR_DATABASE_CONNECTIONS, however many requests wait', async () => {
    assert.equal(await backendsAfterBurst('two', 2, 24), 2);
  });

  it('opens more under the same burst with the default (what the bound above holds back)', async () => {
    const backends = await backendsAfterBurst('default', undefined, 24);
    assert.ok(backends > 2 && backends <= DEFAULT_DATABASE_CONNECTIONS, `${backends} backends`);
  });
});
