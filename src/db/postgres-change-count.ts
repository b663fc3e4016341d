import type { PostgresSql } from './postgres.js';

/** How often the count is read even without a notification: the bound on how late a change is seen. */
const POLL_MS = 1_000;
/** How long closing waits for the UNLISTEN's answer (close). */
const UNLISTEN_WAIT_MS = 1_000;

/** The statements that fire a change count's trigger (changeCountSql). */
export type ChangeEvent = 'INSERT' | 'UPDATE' | 'DELETE';

/**
 * The migration step that makes a change count: `table` with its one row, the function that adds
 * one to it and NOTIFYs `channel` (named after the channel: `<channel>_changed`), and a statement
 * trigger `<table>_changed` running it on each table of `triggers` after the events listed. Laid
 * out as the steps that shipped were written, to the character.
 */
export function changeCountSql(
  table: string,
  channel: string,
  triggers: Readonly<Record<string, readonly ChangeEvent[]>>,
): string {
  const changed = `${channel}_changed`;
  return [
    `CREATE TABLE ${table} (id integer PRIMARY KEY CHECK (id = 1), changes bigint NOT NULL);`,
    `INSERT INTO ${table} (id, changes) VALUES (1, 0);`,
    `CREATE FUNCTION ${changed}() RETURNS trigger LANGUAGE plpgsql AS $$`,
    'BEGIN',
    `  UPDATE ${table} SET changes = changes + 1;`,
    `  PERFORM pg_notify('${channel}', '');`,
    '  RETURN NULL;',
    'END $$;',
    ...Object.entries(triggers).flatMap(([on, events]) => [
      `CREATE TRIGGER ${on}_changed AFTER ${events.join(' OR ')} ON ${on}`,
      `  FOR EACH STATEMENT EXECUTE FUNCTION ${changed}();`,
    ]),
  ].join('\n     ');
}

/**
 * A change count that triggers keep in one row and announce with NOTIFY (changeCountSql),
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

  /**
   * Stops following. The UNLISTEN is waited for a second at most: a nadir process stopping after
   * its PostgreSQL had restarted was seen to hang here (its listen connection re-made by
   * postgres.js, the UNLISTEN never answered), and closing the pool afterwards ends the
   * connection, and the listening with it, anyway.
   */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    const unlistened = this.#unlisten?.().catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, UNLISTEN_WAIT_MS);
    });
    await Promise.race([unlistened, waited]);
    clearTimeout(timer);
  }
}
