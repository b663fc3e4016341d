/** Migration module name in schema_migrations; the catalogue keeps its own in the same file. */
export const ACCOUNTS_MIGRATION_MODULE = 'accounts';

/**
 * Numbered migrations, applied once each, in order. Never edit a shipped entry: append a new one.
 * Timestamps are ISO 8601 UTC text so they sort and read well in the sqlite3 shell.
 */
export const ACCOUNTS_MIGRATIONS: readonly string[] = [
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
];
