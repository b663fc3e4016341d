import type { AccountStore } from './types.js';

/**
 * Tile usage for `nadir accounts usage`, counted in memory and written in batches: one database
 * write per account and month per flush, not one per tile on the hot path. The price is that a
 * crash loses at most the counts of one flush interval; a clean shutdown flushes.
 */
export class TileUsageCounter {
  readonly #accounts: AccountStore;
  /**
   * Month -> account id -> tiles not yet written. Two lookups by strings the caller already holds
   * (the account's id, the month), not one by a key joined from them on every tile, which would be
   * a new string to hash each time.
   */
  #pending = new Map<string, Map<string, number>>();
  readonly #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(accounts: AccountStore, flushEveryMs: number) {
    this.#accounts = accounts;
    if (flushEveryMs > 0) {
      this.#timer = setInterval(() => void this.flush().catch(() => {}), flushEveryMs);
      this.#timer.unref();
    }
  }

  count(accountId: string, month: string, tiles = 1): void {
    let accounts = this.#pending.get(month);
    if (!accounts) {
      accounts = new Map();
      this.#pending.set(month, accounts);
    }
    accounts.set(accountId, (accounts.get(accountId) ?? 0) + tiles);
  }

  /** Writes what has been counted so far. Counts that fail to write are kept for the next flush. */
  flush(): Promise<void> {
    const run = this.#flushing
      .catch(() => {})
      .then(async () => {
        const batch = this.#pending;
        this.#pending = new Map();
        let failure: unknown;
        for (const [month, accounts] of batch) {
          for (const [accountId, tiles] of accounts) {
            try {
              await this.#accounts.addTiles(accountId, month, tiles);
            } catch (error) {
              this.count(accountId, month, tiles);
              failure ??= error;
            }
          }
        }
        if (failure !== undefined) throw failure;
      });
    this.#flushing = run;
    return run;
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.flush();
  }
}
