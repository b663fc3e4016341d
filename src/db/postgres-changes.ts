import type { PostgresSql } from './postgres.js';

/** How often the count is read even without a notification: the bound on how late a change is seen. */
const POLL_MS = 1_000;

/**
 * A change count that triggers keep in one row and announce with NOTIFY (postgres migrations),
 * followed by every server: read again at each notification, at each of this process's own
 * writes, and once a second whatever happens (a notification lost with a dropped connection must
 * not leave a server serving a stale catalogue or a revoked key). Reading `marker` costs nothing,
 * so a cache can be checked against it on every request.
 */
export class ChangeCount {
  readonly #sql: PostgresSql;
  readonly #table: string;
  readonly #timer: NodeJS.Timeout;
  #marker = '';
  #unlisten: (() => Promise<void>) | undefined;

  private constructor(sql: PostgresSql, table: string) {
    this.#sql = sql;
    this.#table = table;
    this.#timer = setInterval(() => void this.refresh().catch(() => undefined), POLL_MS);
    this.#timer.unref();
  }

  /** `table` holds the count (one row, column `changes`); `channel` is what its triggers NOTIFY. */
  static async follow(sql: PostgresSql, table: string, channel: string): Promise<ChangeCount> {
    const count = new ChangeCount(sql, table);
    await count.refresh();
    const listening = await sql.listen(channel, () => void count.refresh().catch(() => undefined));
    count.#unlisten = listening.unlisten;
    return count;
  }

  get marker(): string {
    return this.#marker;
  }

  async refresh(): Promise<void> {
    const [row] = await this.#sql.unsafe<{ changes: string }[]>(`SELECT changes::text FROM ${this.#table}`);
    if (row) this.#marker = row.changes;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#unlisten?.().catch(() => undefined);
  }
}
