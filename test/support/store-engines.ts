/**
 * The engines the stores' contract tests run on: the embedded SQLite (in memory) and a real
 * PostgreSQL with PostGIS (servers.ts). Each `open()` gives fresh, empty, migrated stores: on
 * PostgreSQL a new database copied from a template migrated once, so a test costs a CREATE
 * DATABASE, not a migration.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/clock.js';
import { openStores, type Stores } from '../../src/stores/open-stores.js';
import { type PostgresServer, SKIP_POSTGRES, startPostgres } from './servers.js';

export interface StoreEngine {
  name: 'SQLite' | 'PostgreSQL';
  /** Why this engine's tests cannot run here, or false. */
  skip: string | false;
  /** Fresh stores on their own empty database. */
  open(clock: Clock): Promise<Stores>;
  /** A second connection to the database of `stores`, as another server would open it. */
  reopen(stores: Stores, clock: Clock): Promise<Stores>;
  /** Stops what the engine started (the PostgreSQL server). */
  stop(): Promise<void>;
}

const locations = new WeakMap<Stores, string>();

/** A file per database (not :memory:), so that a second connection can open it as another process would. */
function sqliteEngine(): StoreEngine {
  let dir: string | undefined;
  let databases = 0;
  return {
    name: 'SQLite',
    skip: false,
    async open(clock) {
      dir ??= await mkdtemp(join(tmpdir(), 'nadir-sqlite-'));
      const path = join(dir, `nadir-${++databases}.sqlite`);
      const stores = await openStores({ engine: 'sqlite', path }, clock);
      locations.set(stores, path);
      return stores;
    },
    async reopen(stores, clock) {
      const path = locations.get(stores);
      if (!path) throw new Error('not stores this engine opened');
      const again = await openStores({ engine: 'sqlite', path }, clock);
      locations.set(again, path);
      return again;
    },
    async stop() {
      if (dir) await rm(dir, { recursive: true, force: true });
      dir = undefined;
    },
  };
}

function postgresEngine(): StoreEngine {
  let server: Promise<PostgresServer> | undefined;
  let databases = 0;
  const template = async () => {
    const started = await startPostgres();
    const url = await started.createDatabase('nadir_template');
    // Migrated once; copies of a template must have no open connection, so it is closed again.
    await (await openStores({ engine: 'postgres', url }, () => new Date(0))).close();
    return started;
  };
  return {
    name: 'PostgreSQL',
    skip: SKIP_POSTGRES,
    async open(clock) {
      server ??= template();
      const running = await server;
      const name = `nadir_test_${++databases}`;
      await running.psql('postgres', `CREATE DATABASE ${name} TEMPLATE nadir_template`);
      const url = running.url(name);
      const stores = await openStores({ engine: 'postgres', url }, clock);
      locations.set(stores, url);
      return stores;
    },
    async reopen(stores, clock) {
      const url = locations.get(stores);
      if (!url) throw new Error('not stores this engine opened');
      const again = await openStores({ engine: 'postgres', url }, clock);
      locations.set(again, url);
      return again;
    },
    async stop() {
      await (await server)?.stop();
      server = undefined;
    },
  };
}

export function storeEngines(): StoreEngine[] {
  return [sqliteEngine(), postgresEngine()];
}
