import type { Clock } from '../clock.js';
import type { SqliteDatabase } from '../db/sqlite.js';
import type { AccountUsage, BillingResult, MonthUsage } from './types.js';
import { accountNotFound, validAllowance, validMonth, validTileCount, validTokenId } from './validation.js';

interface UsageRow {
  month: string;
  transactions: number;
  tiles: number;
}

/**
 * Monthly usage counters and the exactly-once transaction ledger, in the accounts database.
 *
 * Every read-check-write runs in a BEGIN IMMEDIATE transaction: it takes SQLite's write lock
 * before reading, so a second process waits (busy_timeout) instead of reading a count that is
 * about to change. A deferred transaction would instead fail with SQLITE_BUSY when it tried to
 * upgrade to a writer after another process had committed, which busy_timeout does not retry.
 * The billed_tokens primary key is a second line of defence: a token row can exist only once.
 */
export class SqliteUsageLedger {
  readonly #db: SqliteDatabase;
  readonly #now: Clock;
  readonly #sql: ReturnType<typeof prepareStatements>;

  /** The accounts migrations must already have run on `db`. */
  constructor(db: SqliteDatabase, now: Clock) {
    this.#db = db;
    this.#now = now;
    this.#sql = prepareStatements(db);
  }

  recordTransaction(tokenId: string, accountId: string, month: string, allowance: number): BillingResult {
    validTokenId(tokenId);
    validMonth(month);
    validAllowance(allowance);
    const record = this.#db.transaction((): BillingResult => {
      this.#requireAccount(accountId);
      if (this.#tokenBilled(tokenId)) return { billed: false, exceeded: false };
      if (this.#monthRow(accountId, month).transactions >= allowance) {
        return { billed: false, exceeded: true };
      }
      this.#sql.insertBilledToken.run(tokenId, accountId, month, this.#now().toISOString());
      this.#sql.countTransaction.run(accountId, month);
      return { billed: true, exceeded: false };
    });
    return record.immediate();
  }

  isTokenBilled(tokenId: string): boolean {
    return this.#tokenBilled(validTokenId(tokenId));
  }

  addTiles(accountId: string, month: string, count: number): void {
    validMonth(month);
    validTileCount(count);
    const add = this.#db.transaction(() => {
      this.#requireAccount(accountId);
      if (count === 0) return;
      this.#sql.addTiles.run(accountId, month, count);
    });
    add.immediate();
  }

  monthUsage(accountId: string, month: string): MonthUsage {
    validMonth(month);
    this.#requireAccount(accountId);
    return this.#monthRow(accountId, month);
  }

  usage(accountId: string): AccountUsage {
    this.#requireAccount(accountId);
    const months = this.#sql.allMonths.all(accountId) as UsageRow[];
    return { accountId, months: months.map((row) => ({ ...row })) };
  }

  #tokenBilled(tokenId: string): boolean {
    return this.#sql.billedToken.get(tokenId) !== undefined;
  }

  #monthRow(accountId: string, month: string): MonthUsage {
    const row = this.#sql.oneMonth.get(accountId, month) as UsageRow | undefined;
    return row ? { ...row } : { month, transactions: 0, tiles: 0 };
  }

  #requireAccount(accountId: string): void {
    if (this.#sql.accountExists.get(accountId) === undefined) {
      throw accountNotFound(accountId);
    }
  }
}

function prepareStatements(db: SqliteDatabase) {
  return {
    accountExists: db.prepare('SELECT 1 FROM accounts WHERE id = ?'),
    billedToken: db.prepare('SELECT 1 FROM billed_tokens WHERE token_id = ?'),
    insertBilledToken: db.prepare(
      'INSERT INTO billed_tokens (token_id, account_id, month, billed_at) VALUES (?, ?, ?, ?)',
    ),
    countTransaction: db.prepare(
      `INSERT INTO usage_months (account_id, month, transactions) VALUES (?, ?, 1)
       ON CONFLICT (account_id, month) DO UPDATE SET transactions = transactions + 1`,
    ),
    addTiles: db.prepare(
      `INSERT INTO usage_months (account_id, month, tiles) VALUES (?, ?, ?)
       ON CONFLICT (account_id, month) DO UPDATE SET tiles = tiles + excluded.tiles`,
    ),
    oneMonth: db.prepare('SELECT month, transactions, tiles FROM usage_months WHERE account_id = ? AND month = ?'),
    allMonths: db.prepare('SELECT month, transactions, tiles FROM usage_months WHERE account_id = ? ORDER BY month'),
  };
}
