import { POSTGRES_ACCOUNTS_MIGRATIONS, PostgresAccountStore } from '../accounts/postgres-account-store.js';
import { PostgresSurveyCatalogue } from '../catalogue/postgres-catalogue.js';
import { POSTGRES_CATALOGUE_MIGRATIONS } from '../catalogue/postgres-catalogue-schema.js';
import type { Clock } from '../clock.js';
import type { DatabaseConfig } from '../config/config.js';
import { EngineGuard } from '../db/engine-guard.js';
import { guardSql, isPostgresUnavailable, migratePostgres, openPostgres } from '../db/postgres.js';
import { ChangeCount } from '../db/postgres-change-count.js';
import type { StoreEvents, Stores } from './stores.js';

/** NADIR_DATABASE_TIMEOUT_MS's default, for a config built by hand. */
const DEFAULT_DATABASE_TIMEOUT_MS = 2_000;

/**
 * Both stores on one PostgreSQL server, migrated under an advisory lock, each following its
 * change count (postgres-change-count.ts), behind one outage guard.
 */
export async function openPostgresStores(
  database: Extract<DatabaseConfig, { engine: 'postgres' }>,
  clock: Clock,
  events: StoreEvents,
): Promise<Stores> {
  const timeoutMs = database.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
  const pool = await openPostgres(database.url, timeoutMs, database.connections);
  const { sql } = pool;
  try {
    const schema = await migratePostgres(sql, [POSTGRES_CATALOGUE_MIGRATIONS, POSTGRES_ACCOUNTS_MIGRATIONS]);
    const catalogueChanges = await ChangeCount.follow(sql, 'catalogue_changes', 'nadir_catalogue');
    const accountChanges = await ChangeCount.follow(sql, 'account_changes', 'nadir_accounts');
    // One guard for both stores: they share the server, and an outage is the server's. The change
    // counters keep the raw pool: they follow the server in the background and recover by themselves.
    const guard = new EngineGuard({
      engine: 'PostgreSQL',
      code: 'DATABASE_UNAVAILABLE',
      timeoutMs,
      failuresToOpen: 3,
      openMs: 2_000,
      isUnavailable: isPostgresUnavailable,
      ...events,
    });
    return {
      catalogue: new PostgresSurveyCatalogue(guardSql(sql, guard), catalogueChanges, clock),
      accounts: new PostgresAccountStore(guardSql(sql, guard), accountChanges, clock),
      schema,
      async close() {
        await catalogueChanges.close();
        await accountChanges.close();
        await pool.end(5);
      },
    };
  } catch (error) {
    await pool.end();
    throw error;
  }
}
