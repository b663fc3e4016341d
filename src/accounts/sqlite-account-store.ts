import type { Statement } from 'better-sqlite3';
import type { Clock } from '../clock.js';
import { migrate, openSqlite, type SqliteDatabase } from '../db/sqlite.js';
import { invalidParameter, NadirError } from '../errors.js';
import { type AccountRow, type ApiKeyRow, accountFromRow, apiKeyInfoFromRow } from './account-rows.js';
import { isLiveKey, issueKey, keyLookup, newAccount, VerifiedKeyCache } from './account-rules.js';
import { normaliseKeyId } from './api-key.js';
import { SQLITE_ACCOUNTS_MIGRATIONS } from './sqlite-schema.js';
import { SqliteUsageLedger } from './sqlite-usage-ledger.js';
import type { Account, AccountStore, ApiKeyInfo, ApiKeyLookup, IssuedApiKey, NewAccount } from './types.js';
import { accountNotFound, validAllowance, validFlag, validRateLimit } from './validation.js';

export interface SqliteAccountStoreOptions {
  /** Clock for createdAt / revokedAt / billed_at. */
  now: Clock;
}

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
  readonly #verifiedKeys = new VerifiedKeyCache();
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
    const account = newAccount(input, this.#now);
    const { name } = account;
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
        account.monthlyAllowance,
        account.tileRateLimit,
        account.tileRateInterval,
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
    return issueKey(
      accountId,
      createdAt,
      ({ keyId, hash }) => insert.run(keyId, accountId, hash, createdAt).changes === 1,
    );
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

  knownApiKey(presentedKey: string): ApiKeyLookup | undefined {
    return this.#verifiedKeys.known(presentedKey, this.#marker());
  }

  async lookupApiKey(presentedKey: string): Promise<ApiKeyLookup | undefined> {
    return this.#verifiedKeys.lookup(presentedKey, this.#marker(), (keyId) => {
      const keyRow = this.#statement('SELECT * FROM api_keys WHERE id = ?').get(keyId) as ApiKeyRow | undefined;
      if (!isLiveKey(presentedKey, keyRow)) return undefined;
      return keyLookup(
        keyId,
        this.#statement('SELECT * FROM accounts WHERE id = ?').get(keyRow.account_id) as AccountRow | undefined,
      );
    });
  }

  // Billing and usage are the ledger's (sqlite-usage-ledger.ts), answered as it answers them.
  async recordTransaction(...call: Parameters<AccountStore['recordTransaction']>) {
    return this.#ledger.recordTransaction(...call);
  }

  async isTokenBilled(tokenId: string): Promise<boolean> {
    return this.#ledger.isTokenBilled(tokenId);
  }

  async addTiles(accountId: string, month: string, count: number): Promise<void> {
    this.#ledger.addTiles(accountId, month, count);
  }

  async monthUsage(...call: Parameters<AccountStore['monthUsage']>) {
    return this.#ledger.monthUsage(...call);
  }

  async usage(...call: Parameters<AccountStore['usage']>) {
    return this.#ledger.usage(...call);
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
