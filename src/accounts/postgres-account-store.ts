import type { Clock } from '../clock.js';
import type { Migrations } from '../db/migrations.js';
import type { PostgresSql } from '../db/postgres.js';
import { type ChangeCount, changeCountSql } from '../db/postgres-change-count.js';
import { invalidParameter, NadirError } from '../errors.js';
import {
  type AccountRow,
  type ApiKeyRow,
  accountFromRow,
  apiKeyInfoFromRow,
  type UsageRow,
  usageFromRow,
} from './account-rows.js';
import { isLiveKey, issueKey, keyLookup, newAccount, VerifiedKeyCache } from './account-rules.js';
import { normaliseKeyId } from './api-key.js';
import type {
  Account,
  AccountStore,
  AccountUsage,
  ApiKeyInfo,
  ApiKeyLookup,
  BillingResult,
  IssuedApiKey,
  MonthUsage,
  NewAccount,
} from './types.js';
import {
  accountNotFound,
  validAllowance,
  validFlag,
  validMonth,
  validRateLimit,
  validTileCount,
  validTokenId,
} from './validation.js';

/**
 * Accounts, keys and usage on PostgreSQL, shared by every server. The same tables as in SQLite
 * (sqlite-schema.ts); names are unique case-insensitively (an index on lower(name)); key order is
 * insertion order (a sequence, as SQLite's rowid). billed_tokens' primary key makes billing
 * exactly-once across servers; the account row's lock makes the allowance exact under races.
 */
export const POSTGRES_ACCOUNTS_MIGRATIONS: Migrations = {
  module: 'accounts',
  steps: [
    `CREATE TABLE accounts (
       id text COLLATE "C" PRIMARY KEY,
       name text NOT NULL,
       raster_subscription boolean NOT NULL DEFAULT false,
       monthly_allowance integer NOT NULL DEFAULT 0 CHECK (monthly_allowance >= 0),
       tile_rate_limit integer NOT NULL CHECK (tile_rate_limit >= 1),
       tile_rate_interval_seconds integer NOT NULL CHECK (tile_rate_interval_seconds >= 1),
       disabled boolean NOT NULL DEFAULT false,
       created_at text NOT NULL
     );
     CREATE UNIQUE INDEX accounts_by_name ON accounts (lower(name));
     CREATE TABLE api_keys (
       id text COLLATE "C" PRIMARY KEY,
       seq bigint GENERATED ALWAYS AS IDENTITY,
       account_id text NOT NULL REFERENCES accounts (id),
       key_hash bytea NOT NULL,
       created_at text NOT NULL,
       revoked_at text
     );
     CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at, seq);
     CREATE TABLE usage_months (
       account_id text NOT NULL REFERENCES accounts (id),
       month text COLLATE "C" NOT NULL,
       transactions integer NOT NULL DEFAULT 0,
       tiles bigint NOT NULL DEFAULT 0,
       PRIMARY KEY (account_id, month)
     );
     CREATE TABLE billed_tokens (
       token_id text PRIMARY KEY,
       account_id text NOT NULL REFERENCES accounts (id),
       month text NOT NULL,
       billed_at text NOT NULL
     );`,
    // Every server remembers verified keys until an account or key changes: a count, announced.
    changeCountSql('account_changes', 'nadir_accounts', {
      accounts: ['UPDATE', 'DELETE'],
      api_keys: ['UPDATE', 'DELETE'],
    }),
  ],
};

const UNIQUE_VIOLATION = '23505';

export class PostgresAccountStore implements AccountStore {
  readonly #sql: PostgresSql;
  readonly #changes: ChangeCount;
  readonly #now: Clock;
  /** Successful key lookups, valid while the change count they were made under stands. */
  readonly #verifiedKeys = new VerifiedKeyCache();

  /** The migrations must have run (composition.ts); `changes` follows `account_changes`. */
  constructor(sql: PostgresSql, changes: ChangeCount, now: Clock) {
    this.#sql = sql;
    this.#changes = changes;
    this.#now = now;
  }

  async createAccount(input: NewAccount): Promise<Account> {
    const account = newAccount(input, this.#now);
    const { id, name, rasterSubscription, monthlyAllowance, tileRateLimit, tileRateInterval, createdAt } = account;
    try {
      await this.#sql`
        INSERT INTO accounts (id, name, raster_subscription, monthly_allowance, tile_rate_limit,
          tile_rate_interval_seconds, disabled, created_at)
        VALUES (${id}, ${name}, ${rasterSubscription}, ${monthlyAllowance}, ${tileRateLimit},
          ${tileRateInterval}, false, ${createdAt})`;
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) {
        throw invalidParameter('name', `An account named ${JSON.stringify(name)} already exists`);
      }
      throw error;
    }
    return account;
  }

  async getAccount(accountId: string): Promise<Account | undefined> {
    const [row] = await this.#sql<AccountRow[]>`SELECT * FROM accounts WHERE id = ${accountId}`;
    return row ? accountFromRow(row) : undefined;
  }

  async getAccountByName(name: string): Promise<Account | undefined> {
    const [row] = await this.#sql<AccountRow[]>`SELECT * FROM accounts WHERE lower(name) = lower(${name.trim()})`;
    return row ? accountFromRow(row) : undefined;
  }

  async listAccounts(): Promise<Account[]> {
    const rows = await this.#sql<AccountRow[]>`SELECT * FROM accounts ORDER BY lower(name) COLLATE "C", id`;
    return rows.map(accountFromRow);
  }

  async setRasterSubscription(accountId: string, enabled: boolean): Promise<Account> {
    const value = validFlag('rasterSubscription', enabled);
    return this.#updated(
      accountId,
      this.#sql`UPDATE accounts SET raster_subscription = ${value} WHERE id = ${accountId} RETURNING *`,
    );
  }

  async setMonthlyAllowance(accountId: string, allowance: number): Promise<Account> {
    const value = validAllowance(allowance);
    return this.#updated(
      accountId,
      this.#sql`UPDATE accounts SET monthly_allowance = ${value} WHERE id = ${accountId} RETURNING *`,
    );
  }

  async setTileRateLimit(accountId: string, limit: number, intervalSeconds: number): Promise<Account> {
    const [validLimit, validInterval] = validRateLimit(limit, intervalSeconds);
    return this.#updated(
      accountId,
      this.#sql`UPDATE accounts SET tile_rate_limit = ${validLimit}, tile_rate_interval_seconds = ${validInterval}
        WHERE id = ${accountId} RETURNING *`,
    );
  }

  async setDisabled(accountId: string, disabled: boolean): Promise<Account> {
    const value = validFlag('disabled', disabled);
    return this.#updated(
      accountId,
      this.#sql`UPDATE accounts SET disabled = ${value} WHERE id = ${accountId} RETURNING *`,
    );
  }

  async #updated(accountId: string, update: Promise<AccountRow[]>): Promise<Account> {
    const [row] = await update;
    await this.#changes.refresh();
    if (!row) throw accountNotFound(accountId);
    return accountFromRow(row);
  }

  async issueApiKey(accountId: string): Promise<IssuedApiKey> {
    if (!(await this.getAccount(accountId))) throw accountNotFound(accountId);
    const createdAt = this.#now().toISOString();
    return issueKey(accountId, createdAt, async ({ keyId, hash }) => {
      const inserted = await this.#sql`
        INSERT INTO api_keys (id, account_id, key_hash, created_at)
        VALUES (${keyId}, ${accountId}, ${hash}, ${createdAt}) ON CONFLICT (id) DO NOTHING`;
      return inserted.count === 1;
    });
  }

  async listApiKeys(accountId: string): Promise<ApiKeyInfo[]> {
    if (!(await this.getAccount(accountId))) throw accountNotFound(accountId);
    const rows = await this.#sql<ApiKeyRow[]>`
      SELECT * FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, seq`;
    return rows.map(apiKeyInfoFromRow);
  }

  async getApiKey(keyIdOrPrefix: string): Promise<ApiKeyInfo | undefined> {
    const row = await this.#apiKeyRow(keyIdOrPrefix);
    return row ? apiKeyInfoFromRow(row) : undefined;
  }

  async revokeApiKey(keyIdOrPrefix: string): Promise<ApiKeyInfo> {
    const row = await this.#apiKeyRow(keyIdOrPrefix);
    if (!row) throw new NadirError('NOT_FOUND', `No API key ${JSON.stringify(keyIdOrPrefix)}`);
    // COALESCE keeps the first revocation time, so revoking twice is harmless.
    const [revoked] = await this.#sql<ApiKeyRow[]>`
      UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${this.#now().toISOString()}) WHERE id = ${row.id} RETURNING *`;
    await this.#changes.refresh();
    return apiKeyInfoFromRow(revoked ?? row);
  }

  knownApiKey(presentedKey: string): ApiKeyLookup | undefined {
    return this.#verifiedKeys.known(presentedKey, this.#changes.marker);
  }

  async lookupApiKey(presentedKey: string): Promise<ApiKeyLookup | undefined> {
    return this.#verifiedKeys.lookup(presentedKey, this.#changes.marker, async (keyId) => {
      const [row] = await this.#sql<(ApiKeyRow & { account: AccountRow | null })[]>`
        SELECT k.*, row_to_json(a) AS account FROM api_keys k LEFT JOIN accounts a ON a.id = k.account_id
        WHERE k.id = ${keyId}`;
      return isLiveKey(presentedKey, row) ? keyLookup(keyId, row.account) : undefined;
    });
  }

  async recordTransaction(
    tokenId: string,
    accountId: string,
    month: string,
    allowance: number,
  ): Promise<BillingResult> {
    validTokenId(tokenId);
    validMonth(month);
    validAllowance(allowance);
    return this.#sql.begin(async (sql) => {
      // The account's row, locked: racing first downloads of one account take turns from here on
      // (NO KEY: usage rows being inserted for it elsewhere are not held up).
      const [account] = await sql`SELECT 1 FROM accounts WHERE id = ${accountId} FOR NO KEY UPDATE`;
      if (!account) throw accountNotFound(accountId);
      const [billed] = await sql`SELECT 1 FROM billed_tokens WHERE token_id = ${tokenId}`;
      if (billed) return { billed: false, exceeded: false };
      const [row] = await sql<{ transactions: number }[]>`
        SELECT transactions FROM usage_months WHERE account_id = ${accountId} AND month = ${month}`;
      if ((row?.transactions ?? 0) >= allowance) return { billed: false, exceeded: true };
      // The primary key, not the lock, is what bills a token once, whatever else races.
      const inserted = await sql`
        INSERT INTO billed_tokens (token_id, account_id, month, billed_at)
        VALUES (${tokenId}, ${accountId}, ${month}, ${this.#now().toISOString()}) ON CONFLICT DO NOTHING`;
      if (inserted.count === 0) return { billed: false, exceeded: false };
      await sql`
        INSERT INTO usage_months (account_id, month, transactions) VALUES (${accountId}, ${month}, 1)
        ON CONFLICT (account_id, month) DO UPDATE SET transactions = usage_months.transactions + 1`;
      return { billed: true, exceeded: false };
    });
  }

  async isTokenBilled(tokenId: string): Promise<boolean> {
    const [row] = await this.#sql`SELECT 1 FROM billed_tokens WHERE token_id = ${validTokenId(tokenId)}`;
    return row !== undefined;
  }

  async addTiles(accountId: string, month: string, count: number): Promise<void> {
    validMonth(month);
    validTileCount(count);
    await this.#requireAccount(accountId);
    if (count === 0) return;
    // One statement: counts flushed by several servers at once add up.
    await this.#sql`
      INSERT INTO usage_months (account_id, month, tiles) VALUES (${accountId}, ${month}, ${count})
      ON CONFLICT (account_id, month) DO UPDATE SET tiles = usage_months.tiles + excluded.tiles`;
  }

  async monthUsage(accountId: string, month: string): Promise<MonthUsage> {
    validMonth(month);
    await this.#requireAccount(accountId);
    const [row] = await this.#sql<UsageRow[]>`
      SELECT month, transactions, tiles::text FROM usage_months WHERE account_id = ${accountId} AND month = ${month}`;
    return row ? usageFromRow(row) : { month, transactions: 0, tiles: 0 };
  }

  async usage(accountId: string): Promise<AccountUsage> {
    await this.#requireAccount(accountId);
    const rows = await this.#sql<UsageRow[]>`
      SELECT month, transactions, tiles::text FROM usage_months WHERE account_id = ${accountId} ORDER BY month`;
    return { accountId, months: rows.map(usageFromRow) };
  }

  async close(): Promise<void> {
    // The pool and the change follower belong to the composition root, which closes them.
  }

  async #requireAccount(accountId: string): Promise<void> {
    const [row] = await this.#sql`SELECT 1 FROM accounts WHERE id = ${accountId}`;
    if (!row) throw accountNotFound(accountId);
  }

  async #apiKeyRow(keyIdOrPrefix: string): Promise<ApiKeyRow | undefined> {
    const keyId = normaliseKeyId(keyIdOrPrefix);
    if (keyId === undefined) return undefined;
    const [row] = await this.#sql<ApiKeyRow[]>`SELECT * FROM api_keys WHERE id = ${keyId}`;
    return row;
  }
}
