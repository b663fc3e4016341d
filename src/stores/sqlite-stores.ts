import { SqliteAccountStore } from '../accounts/index.js';
import { SqliteSurveyCatalogue } from '../catalogue/sqlite-catalogue.js';
import type { Clock } from '../clock.js';
import { openSqlite } from '../db/sqlite.js';
import type { Stores } from './stores.js';

/** Both stores in one SQLite file, each migrated by its own constructor. */
export function openSqliteStores(path: string, clock: Clock): Stores {
  const db = openSqlite(path);
  const catalogue = new SqliteSurveyCatalogue(db, clock);
  const accounts = new SqliteAccountStore(db, { now: clock });
  return {
    catalogue,
    accounts,
    schema: { catalogue: catalogue.schemaVersion, accounts: accounts.schemaVersion },
    close: async () => {
      db.close();
    },
  };
}
