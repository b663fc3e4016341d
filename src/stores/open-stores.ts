import type { Clock } from '../clock.js';
import type { DatabaseConfig } from '../config/config.js';
import { openSqliteStores } from './sqlite-stores.js';
import type { StoreEvents, Stores } from './stores.js';

export type { StoreEvents, Stores };

/**
 * Opens the database and brings its schema up to date (`nadir migrate`, and every command at
 * start): SQLite under its write lock, PostgreSQL under an advisory lock, so servers starting at
 * once take turns. A database that cannot be reached, or that a newer nadir migrated, fails here.
 * PostgreSQL's modules are loaded only for a PostgreSQL database: a command on the embedded
 * default does not pay for them at start.
 */
export async function openStores(database: DatabaseConfig, clock: Clock, events: StoreEvents = {}): Promise<Stores> {
  if (database.engine === 'sqlite') return openSqliteStores(database.path, clock);
  const { openPostgresStores } = await import('./postgres-stores.js');
  return openPostgresStores(database, clock, events);
}
