import { randomUUID } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import { LruCache } from '../cache/lru.js';
import type { Clock } from '../clock.js';
import { migrate, openSqlite, type SqliteDatabase } from '../db/sqlite.js';
import { invalidParameter, NadirError } from '../errors.js';
import {
  apiKeyDigest,
  apiKeyMatchesHash,
  displayPrefix,
  generateApiKey,
  keyIdOfApiKey,
  normaliseKeyId,
} from './api-key.js';
import { SQLITE_ACCOUNTS_MIGRATIONS } from './sqlite-schema.js';
import { SqliteUsageLedger } from './sqlite-usage-ledger.js';
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
  DEFAULT_MONTHLY_ALLOWANCE,
  DEFAULT_TILE_RATE_INTERVAL_SECONDS,
  DEFAULT_TILE_RATE_LIMIT,
  validAccountName,
  validAllowance,
  validFlag,
  validRateLimit,
} from './validation.js';

export interface SqliteAccountStoreOptions {
  /** Clock for createdAt / revokedAt / billed_at. */
  now: Clock;
}

interface AccountRow {
  id: string;
  name: string;
  raster_subscription: number;
  monthly_allowance: number;
  tile_rate_limit: number;
  tile_rate_interval_seconds: number;
  disabled: number;
  created_at: string;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  key_hash: Buffer;
  created_at: string;
  revoked_at: string | null;
}

/** Verified keys remembered between requests (tile clients send thousands a minute). */
const KEY_CACHE_ENTRIES = 10_000;

/** A 48-bit key id collides with odds ~n²/2⁴⁹; retrying a couple of times makes it moot. */
const KEY_ID_ATTEMPTS = 3;

/**
 * AccountStore on the embedded SQLite database (better-sqlite3). It may share the file with
 * the survey catalogue: its tables and migrations are its own ('accounts' module).
 * better-sqlite3 is synchronous; the async methods keep the contract a networked store needs.
 */
export class SqliteAccountStore implements AccountStore {
  readonly #db: SqliteDatabase;
  /** The accounts' schema version in the file, once migrated. */
  readonly schemaVersion: number;
  // Preparing costs more than running a lookup; every statement here is reused per request.
  readonly #statements = new Map<string, Statement>();
  readonly #ownsDatabase: boolean;
  readonly #now: Clock;
  readonly #ledger: SqliteUsageLedger;
  /**
   * Successful key lookups, valid while the marker is unchanged: account_changes counts changes
   * to accounts and keys by any process (the `nadir accounts` CLI, another worker), #ownWrites this
   * store's own. So a revocation or a disabled account takes effect on the very next request.
   */
  readonly #verifiedKeys = new LruCache<{ lookup: ApiKeyLookup; marker: string }>({ maxEntries: KEY_CACHE_ENTRIES });
  #ownWrites = 0;
  /** Whether the change count was read in this turn of the event loop. */
  #readThisTurn = false;
  #seenDataVersion = -1;
  #changes = 0;

  /** Opens (creating and migrating) the database at `path`; close() closes it. */
  static open(path: string, options: SqliteAccountStoreOptions): SqliteAccountStore {
    return new SqliteAccountStore(openSqlite(path), options, true);
  }

  /** Uses an already open database (e.g. the catalogue's); close() leaves it open. */
  constructor(db: SqliteDatabase, options: SqliteAccountStoreOptions, ownsDatabase = false) {
    this.schemaVersion = migrate(db, SQLITE_ACCOUNTS_MIGRATIONS);
    this.#db = db;
    this.#ownsDatabase = ownsDatabase;
    this.#now = options.now;
    this.#ledger = new SqliteUsageLedger(db, this.#now);
  }

  #statement(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  async createAccount(input: NewAccount): Promise<Account> {
    const name = validAccountName(input.name);
    const monthlyAllowance = validAllowance(input.monthlyAllowance ?? DEFAULT_MONTHLY_ALLOWANCE);
    const [tileRateLimit, tileRateInterval] = validRateLimit(
      input.tileRateLimit ?? DEFAULT_TILE_RATE_LIMIT,
      input.tileRateInterval ?? DEFAULT_TILE_RATE_INTERVAL_SECONDS,
    );
    const account: Account = {
      id: randomUUID(),
      name,
      rasterSubscription: validFlag('rasterSubscription', input.rasterSubscription ?? false),
      monthlyAllowance,
      tileRateLimit,
      tileRateInterval,
      createdAt: this.#now().toISOString(),
      disabled: false,
    };
    const insert = this.#db.transaction(() => {
      if (this.#accountRowByName(name)) {
        throw invalidParameter('name', `An account named ${JSON.stringify(name)} already exists`);
      }
      this.#statement(
        `INSERT INTO accounts (id, name, raster_subscription, monthly_allowance, tile_rate_limit,
             tile_rate_interval_seconds, disabled, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?)`,
      ).run(
        account.id,
        name,
        Number(account.rasterSubscription),
        monthlyAllowance,
        tileRateLimit,
        tileRateInterval,
        account.createdAt,
      );
    });
    insert.immediate();
    return account;
  }

  async getAccount(accountId: string): Promise<Account | undefined> {
    const row = this.#statement('SELECT * FROM accounts WHERE id = ?').get(accountId);
    return row ? accountFromRow(row as AccountRow) : undefined;
  }

  async getAccountByName(name: string): Promise<Account | undefined> {
    const row = this.#accountRowByName(name.trim());
    return row ? accountFromRow(row) : undefined;
  }

  async listAccounts(): Promise<Account[]> {
    const rows = this.#statement('SELECT * FROM accounts ORDER BY name').all() as AccountRow[];
    return rows.map(accountFromRow);
  }

  async setRasterSubscription(accountId: string, enabled: boolean): Promise<Account> {
    return this.#updateAccount(accountId, 'raster_subscription = ?', Number(validFlag('rasterSubscription', enabled)));
  }

  async setMonthlyAllowance(accountId: string, allowance: number): Promise<Account> {
    return this.#updateAccount(accountId, 'monthly_allowance = ?', validAllowance(allowance));
  }

  async setTileRateLimit(accountId: string, limit: number, intervalSeconds: number): Promise<Account> {
    const [validLimit, validInterval] = validRateLimit(limit, intervalSeconds);
    return this.#updateAccount(
      accountId,
      'tile_rate_limit = ?, tile_rate_interval_seconds = ?',
      validLimit,
      validInterval,
    );
  }

  async setDisabled(accountId: string, disabled: boolean): Promise<Account> {
    return this.#updateAccount(accountId, 'disabled = ?', Number(validFlag('disabled', disabled)));
  }

  async issueApiKey(accountId: string): Promise<IssuedApiKey> {
    if (!(await this.getAccount(accountId))) throw accountNotFound(accountId);
    const createdAt = this.#now().toISOString();
    const insert = this.#statement(
      'INSERT OR IGNORE INTO api_keys (id, account_id, key_hash, created_at) VALUES (?, ?, ?, ?)',
    );
    for (let attempt = 0; attempt < KEY_ID_ATTEMPTS; attempt++) {
      const generated = generateApiKey();
      if (insert.run(generated.keyId, accountId, generated.hash, createdAt).changes === 1) {
        return {
          id: generated.keyId,
          accountId,
          prefix: generated.prefix,
          createdAt,
          revokedAt: null,
          revoked: false,
          key: generated.key,
        };
      }
    }
    throw new NadirError('INTERNAL', 'Could not allocate a unique API key id');
  }

  async listApiKeys(accountId: string): Promise<ApiKeyInfo[]> {
    if (!(await this.getAccount(accountId))) throw accountNotFound(accountId);
    const rows = this.#statement('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, rowid').all(
      accountId,
    ) as ApiKeyRow[];
    return rows.map(apiKeyInfoFromRow);
  }

  async getApiKey(keyIdOrPrefix: string): Promise<ApiKeyInfo | undefined> {
    const row = this.#apiKeyRow(keyIdOrPrefix);
    return row ? apiKeyInfoFromRow(row) : undefined;
  }

  async revokeApiKey(keyIdOrPrefix: string): Promise<ApiKeyInfo> {
    const row = this.#apiKeyRow(keyIdOrPrefix);
    if (!row) throw new NadirError('NOT_FOUND', `No API key ${JSON.stringify(keyIdOrPrefix)}`);
    // COALESCE keeps the first revocation time, so revoking twice is harmless.
    this.#ownWrites++;
    this.#statement('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?').run(
      this.#now().toISOString(),
      row.id,
    );
    return apiKeyInfoFromRow(this.#apiKeyRow(row.id) ?? row);
  }

  /**
   * Read at most once per turn of the event loop: a tile server asks for it on every request, and
   * a change committed by another process is still seen by the next turn. data_version is the
   * cheap question (has another connection committed?); only then is the change count read.
   */
  #marker(): string {
    if (!this.#readThisTurn) {
      this.#readThisTurn = true;
      setImmediate(() => {
        this.#readThisTurn = false;
      });
      const dataVersion = this.#statement('PRAGMA data_version').pluck().get() as number;
      if (dataVersion !== this.#seenDataVersion) {
        this.#seenDataVersion = dataVersion;
        this.#changes = this.#statement('SELECT changes FROM account_changes').pluck().get() as number;
      }
    }
    return `${this.#changes}:${this.#ownWrites}`;
  }

  async lookupApiKey(presentedKey: string): Promise<ApiKeyLookup | undefined> {
    // Keyed by the key's digest, not the key (api-key.ts says why).
    const digest = apiKeyDigest(presentedKey);
    const marker = this.#marker();
    const cached = this.#verifiedKeys.get(digest);
    if (cached?.marker === marker) return cached.lookup;
    const found = this.#lookupApiKeyRow(presentedKey);
    if (found) this.#verifiedKeys.set(digest, { lookup: found, marker });
    return found;
  }

  #lookupApiKeyRow(presentedKey: string): ApiKeyLookup | undefined {
    const keyId = keyIdOfApiKey(presentedKey);
    if (keyId === undefined) return undefined;
    const keyRow = this.#statement('SELECT * FROM api_keys WHERE id = ?').get(keyId) as ApiKeyRow | undefined;
    // Compare the hash even for revoked keys so the answer's timing says nothing about them.
    if (!keyRow || !apiKeyMatchesHash(presentedKey, keyRow.key_hash) || keyRow.revoked_at) {
      return undefined;
    }
    const row = this.#statement('SELECT * FROM accounts WHERE id = ?').get(keyRow.account_id) as AccountRow | undefined;
    const account = row ? accountFromRow(row) : undefined;
    if (!account || account.disabled) return undefined;
    return { account, keyId };
  }

  async recordTransaction(
    tokenId: string,
    accountId: string,
    month: string,
    allowance: number,
  ): Promise<BillingResult> {
    return this.#ledger.recordTransaction(tokenId, accountId, month, allowance);
  }

  async isTokenBilled(tokenId: string): Promise<boolean> {
    return this.#ledger.isTokenBilled(tokenId);
  }

  async addTiles(accountId: string, month: string, count: number): Promise<void> {
    this.#ledger.addTiles(accountId, month, count);
  }

  async monthUsage(accountId: string, month: string): Promise<MonthUsage> {
    return this.#ledger.monthUsage(accountId, month);
  }

  async usage(accountId: string): Promise<AccountUsage> {
    return this.#ledger.usage(accountId);
  }

  async close(): Promise<void> {
    if (this.#ownsDatabase && this.#db.open) this.#db.close();
  }

  #accountRowByName(name: string): AccountRow | undefined {
    return this.#statement('SELECT * FROM accounts WHERE name = ?').get(name) as AccountRow | undefined;
  }

  #apiKeyRow(keyIdOrPrefix: string): ApiKeyRow | undefined {
    const keyId = normaliseKeyId(keyIdOrPrefix);
    if (keyId === undefined) return undefined;
    return this.#statement('SELECT * FROM api_keys WHERE id = ?').get(keyId) as ApiKeyRow | undefined;
  }

  /** `assignments` is a fixed SQL fragment from this class, never user input. */
  #updateAccount(accountId: string, assignments: string, ...values: number[]): Account {
    const result = this.#statement(`UPDATE accounts SET ${assignments} WHERE id = ?`).run(...values, accountId);
    this.#ownWrites++;
    if (result.changes === 0) throw accountNotFound(accountId);
    const row = this.#statement('SELECT * FROM accounts WHERE id = ?').get(accountId);
    return accountFromRow(row as AccountRow);
  }
}

function accountFromRow(row: AccountRow): Account {
  return {
    id: row.id,
    name: row.name,
    rasterSubscription: row.raster_subscription === 1,
    monthlyAllowance: row.monthly_allowance,
    tileRateLimit: row.tile_rate_limit,
    tileRateInterval: row.tile_rate_interval_seconds,
    createdAt: row.created_at,
    disabled: row.disabled === 1,
  };
}

function apiKeyInfoFromRow(row: ApiKeyRow): ApiKeyInfo {
  return {
    id: row.id,
    accountId: row.account_id,
    prefix: displayPrefix(row.id),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    revoked: row.revoked_at !== null,
  };
}
