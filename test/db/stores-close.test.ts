import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openStores } from '../../src/stores/open-stores.js';
import { testClock } from '../support/clock.js';
import { type PostgresServer, SKIP_POSTGRES, startPostgres } from '../support/servers.js';

describe('PostgreSQL stores close', { skip: SKIP_POSTGRES, timeout: 60_000 }, () => {
  let postgres: PostgresServer | undefined;
  before(async () => {
    postgres = await startPostgres();
  });
  after(async () => {
    await postgres?.stop();
  });

  /**
   * Stores on a new database `name`, then PostgreSQL down for a while, as in an outage, asked
   * `asks` times `everyMs` apart (the pool's and the listener's reconnects fail meanwhile), then back.
   */
  async function afterOutage(name: string, asks: number, everyMs: number) {
    const server = postgres as PostgresServer;
    const url = await server.createDatabase(name);
    const stores = await openStores({ engine: 'postgres', url }, testClock('2030-01-01T00:00:00Z').now);
    await stores.catalogue.ping();
    await server.halt();
    for (let i = 0; i < asks; i++) {
      await new Promise((resolve) => setTimeout(resolve, everyMs));
      await stores.catalogue.ping().catch(() => undefined);
    }
    await server.restart();
    return { server, stores };
  }

  it('after PostgreSQL restarted under them, within seconds (a server stopping must not hang)', async () => {
    const { stores } = await afterOutage('closing', 4, 1_000);
    // Long enough for the pool and the notification listener to find the server back.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await stores.catalogue.ping();
    const started = performance.now();
    const closed = stores.close().then(() => 'closed');
    const late = new Promise((resolve) => setTimeout(resolve, 15_000, 'still open after 15 s').unref());
    assert.equal(await Promise.race([closed, late]), 'closed');
    assert.ok(performance.now() - started < 8_000, `closed in ${(performance.now() - started).toFixed(0)} ms`);
  });

  it('leaves no connection behind: none comes back after closing (a stopping process must exit)', async () => {
    // Failed connects while it is down: the pool waits longer before each new try.
    const { server, stores } = await afterOutage('leftover', 8, 500);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // A query whose connection waits out its backoff when the stores close.
    void stores.catalogue.ping().catch(() => undefined);
    await stores.close();
    const connections = () =>
      server.psql('postgres', "SELECT count(*) FROM pg_stat_activity WHERE datname = 'leftover'");
    for (let i = 0; i < 6; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(await connections(), '0', `a connection to the closed stores' database ${i * 0.5 + 0.5} s later`);
    }
  });
});
