import type { Migrations } from '../db/migrations.js';

/**
 * The accounts' tables in the SQLite file (the catalogue keeps its own module in the same file).
 * Timestamps are ISO 8601 UTC text so they sort and read well in the sqlite3 shell.
 */
export const SQLITE_ACCOUNTS_MIGRATIONS: Migrations = {
  module: 'accounts',
  steps: [
    `
  CREATE TABLE accounts (
    id                          TEXT PRIMARY KEY,
    name                        TEXT NOT NULL UNIQUE COLLATE NOCASE,
    raster_subscription         INTEGER NOT NULL DEFAULT 0 CHECK (raster_subscription IN (0, 1)),
    monthly_allowance           INTEGER NOT NULL DEFAULT 0 CHECK (monthly_allowance >= 0),
    tile_rate_limit             INTEGER NOT NULL CHECK (tile_rate_limit >= 1),
    tile_rate_interval_seconds  INTEGER NOT NULL CHECK (tile_rate_interval_seconds >= 1),
    disabled                    INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
    created_at                  TEXT NOT NULL
  );

  -- Only the SHA-256 of each key is kept; the key itself is shown once at creation.
  CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    key_hash    BLOB NOT NULL,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
  );
  CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at);

  CREATE TABLE usage_months (
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    month         TEXT NOT NULL,
    transactions  INTEGER NOT NULL DEFAULT 0,
    tiles         INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, month)
  );

  -- One row per token ever billed: its primary key is what makes billing exactly-once.
  CREATE TABLE billed_tokens (
    token_id    TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    month       TEXT NOT NULL,
    billed_at   TEXT NOT NULL
  );
  `,
    // A count of changes to accounts and keys, whoever makes them: verified keys are remembered
    // until it moves. PRAGMA data_version moves at every commit of another connection, usage counts
    // included, so every worker forgot its verified keys at each of the others' usage flushes.
    `CREATE TABLE account_changes (id INTEGER PRIMARY KEY CHECK (id = 1), changes INTEGER NOT NULL);
     INSERT INTO account_changes (id, changes) VALUES (1, 0);
     CREATE TRIGGER accounts_updated AFTER UPDATE ON accounts BEGIN UPDATE account_changes SET changes = changes + 1; END;
     CREATE TRIGGER accounts_deleted AFTER DELETE ON accounts BEGIN UPDATE account_changes SET changes = changes + 1; END;
     CREATE TRIGGER api_keys_updated AFTER UPDATE ON api_keys BEGIN UPDATE account_changes SET changes = changes + 1; END;
     CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys BEGIN UPDATE account_changes SET changes = changes + 1; END;`,
  ],
};
