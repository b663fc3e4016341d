/**
 * Coverage searches on PostgreSQL (a listing with no date and no tag filter: what every coverage
 * request asks) gathered over one turn of the event loop and sent as one statement.
 *
 * A statement's cost on the wire is mostly not its rows: each one is a write that wakes a sleeping
 * backend, a Bind/Execute/Sync the backend parses and an executor it starts, and on this kind of
 * VM the wake-up, charged to the writer, cost more than parsing the answer (bench/scale, issue
 * 37). Under load several requests reach the search in the same turn; sent together they share
 * all of that (4 searches at once, one client: 136 against 200 us of client and backend CPU a
 * search). A search alone still goes as it did, through the one-search function, which does less.
 * Batching is in the manner of DataLoader's per-tick dispatch (graphql/dataloader).
 */
import type { PostgresSql } from '../db/postgres.js';
import type { Bounds } from '../geo/web-mercator.js';

/** What a coverage search asks the database: an area and the content types it must have. */
export interface ListingSearch {
  area: Bounds;
  /** typeMask of the requested content types; 0 for any. */
  mask: number;
  /** Every requested type (true), or any of them. */
  matchAll: boolean;
}

/**
 * The most searches in one statement; a larger turn's go as several, split evenly, which the pool
 * runs in parallel. Measured at 1M surveys, 16 connections of wrk, 4 of the pool (bench/scale's
 * set-up): at most 8 gave 7,070 answers/s, p99 6.6-7.2 ms, 0.195 ms of nadir and PostgreSQL CPU an
 * answer; 4 gave 6,860/s, p99 6.4 ms, 0.208 ms; 16 gave 5,600-5,800/s and p99 22-27 ms (one
 * backend held a turn's searches while the other core had none); one a statement (no batching)
 * 5,300-5,900/s, p99 7.6-10.4 ms, 0.25-0.27 ms.
 */
export const MOST_SEARCHES_A_STATEMENT = 8;

interface Waiting<Row> {
  search: ListingSearch;
  resolve: (rows: Row[]) => void;
  reject: (error: unknown) => void;
}

export class ListingBatches<Row extends object> {
  readonly #sql: PostgresSql;
  #waiting: Waiting<Row>[] = [];
  #scheduled = false;

  constructor(sql: PostgresSql) {
    this.#sql = sql;
  }

  /** The search's candidate rows, once this turn's searches have been answered. */
  candidates(search: ListingSearch): Promise<Row[]> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ search, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      // After the turn's I/O callbacks (and their promise reactions): every search they began is here.
      setImmediate(() => this.#sendAll());
    });
  }

  #sendAll(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    this.#scheduled = false;
    // Split evenly: statements run in parallel on the pool's connections, and the longest decides.
    const size = Math.ceil(waiting.length / Math.ceil(waiting.length / MOST_SEARCHES_A_STATEMENT));
    for (let i = 0; i < waiting.length; i += size) {
      const batch = waiting.slice(i, i + size);
      this.#send(batch).catch((error: unknown) => {
        for (const { reject } of batch) reject(error);
      });
    }
  }

  async #send(batch: Waiting<Row>[]): Promise<void> {
    const sql = this.#sql;
    if (batch.length === 1) {
      const [{ search, resolve }] = batch as [Waiting<Row>];
      const { minX, minY, maxX, maxY } = search.area;
      resolve(
        await sql<Row[]>`
          SELECT * FROM nadir_listing_candidates(${minX}, ${minY}, ${maxX}, ${maxY}, ${search.mask}, ${search.matchAll})`,
      );
      return;
    }
    const column = (value: (search: ListingSearch) => number) => batch.map(({ search }) => value(search));
    // Untyped number arrays: the casts say what they are.
    const rows = await sql<(Row & { search: number })[]>`
      SELECT * FROM nadir_listing_candidates_batch(${column((s) => s.area.minX)}::float8[],
        ${column((s) => s.area.minY)}::float8[], ${column((s) => s.area.maxX)}::float8[],
        ${column((s) => s.area.maxY)}::float8[], ${column((s) => s.mask)}::integer[],
        ${column((s) => (s.matchAll ? 1 : 0))}::integer[])`;
    const answers = batch.map((): Row[] => []);
    // `search` is the place in the arrays, from 1.
    for (const row of rows) answers[row.search - 1]?.push(row);
    for (const [i, { resolve }] of batch.entries()) resolve(answers[i] as Row[]);
  }
}
