/**
 * The in-process floors of the coverage benchmark, on the compiled code (dist/, as `nadir serve`
 * runs it; tsx's name-keeping wrappers would slow the JavaScript down):
 *
 * - raw SQL: the catalogue's candidate statement alone (R*Tree, join, type filter: what a search
 *   with no date runs), the least any search through SQLite can cost;
 * - search: `catalogue.search` as the route calls it (SQL, exact footprint test, order, page).
 *
 * One caller, one query at a time, no HTTP, authentication, JSON or token.
 */
import type { SurveySearch } from '../../src/catalogue/catalogue.js';
import type * as CandidatesModule from '../../src/catalogue/sqlite-candidates.js';
import type * as CatalogueModule from '../../src/catalogue/sqlite-catalogue.js';
import type { ContentType } from '../../src/catalogue/survey.js';
import type * as SqliteModule from '../../src/db/sqlite.js';
import type { Bounds } from '../../src/geo/web-mercator.js';
import { importCompiled } from '../load/compiled.js';

export interface Rate {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  count: number;
}

export interface MatchStats {
  /** Surveys a query matches (the response's `total`): mean, percentiles, share with none. */
  mean: number;
  p50: number;
  p90: number;
  max: number;
  zeroShare: number;
  /** Rows the candidate statement returns (before the exact footprint test). */
  candidatesMean: number;
  queries: number;
}

export interface Floor {
  sql(areas: Bounds[], seconds: number): Promise<Rate>;
  search(areas: Bounds[], seconds: number): Promise<Rate>;
  matches(areas: Bounds[]): Promise<MatchStats>;
  sqliteVersion: string;
  close(): void;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

function rate(latencies: number[], seconds: number): Rate {
  const sorted = latencies.sort((a, b) => a - b);
  return {
    perSecond: sorted.length / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    count: sorted.length,
  };
}

export async function openFloor(database: string, types: ContentType[]): Promise<Floor> {
  const { SqliteSurveyCatalogue } = await importCompiled<typeof CatalogueModule>('catalogue/sqlite-catalogue.js');
  const { candidatesSql, candidateParameters } = await importCompiled<typeof CandidatesModule>(
    'catalogue/sqlite-candidates.js',
  );
  const { openSqlite } = await importCompiled<typeof SqliteModule>('db/sqlite.js');
  const db = openSqlite(database);
  const catalogue = new SqliteSurveyCatalogue(db, () => new Date());
  // The statement a search with no date filter runs, rows as arrays as the catalogue reads them.
  const statement = db.prepare(candidatesSql('listing', false)).raw(true);
  const parameters = (area: Bounds) => candidateParameters({ area, types, typeMatch: 'all' });
  const query = (area: Bounds): SurveySearch<'listing'> => ({
    area,
    types,
    typeMatch: 'all',
    limit: 20,
    offset: 0,
    view: 'listing',
  });

  // A timed loop over the areas, round robin, after a warm-up of a fifth of the time. Only
  // promises are awaited: awaiting the synchronous SQL would add a microtask to its floor.
  const passed = new Set<string>();
  async function timed(name: string, areas: Bounds[], seconds: number, call: (area: Bounds) => unknown): Promise<Rate> {
    let i = 0;
    const next = () => areas[i++ % areas.length] as Bounds;
    // The first time, one pass over every area: first touches of a large file's pages are page faults.
    if (!passed.has(name)) for (const area of areas) await call(area);
    passed.add(name);
    for (const end = performance.now() + seconds * 200; performance.now() < end; ) await call(next());
    const latencies: number[] = [];
    const started = performance.now();
    for (const end = started + seconds * 1000; performance.now() < end; ) {
      const t = performance.now();
      const answer = call(next());
      if (answer instanceof Promise) await answer;
      latencies.push(performance.now() - t);
    }
    return rate(latencies, (performance.now() - started) / 1000);
  }

  return {
    sqliteVersion: (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v,
    sql: (areas, seconds) => timed('sql', areas, seconds, (area) => statement.all(parameters(area))),
    search: (areas, seconds) => timed('search', areas, seconds, (area) => catalogue.search(query(area))),
    matches: async (areas) => {
      const totals: number[] = [];
      let candidates = 0;
      for (const area of areas) {
        totals.push((await catalogue.search(query(area))).total);
        candidates += statement.all(parameters(area)).length;
      }
      totals.sort((a, b) => a - b);
      return {
        mean: totals.reduce((a, b) => a + b, 0) / totals.length,
        p50: percentile(totals, 50),
        p90: percentile(totals, 90),
        max: totals.at(-1) ?? 0,
        zeroShare: totals.filter((n) => n === 0).length / totals.length,
        candidatesMean: candidates / areas.length,
        queries: areas.length,
      };
    },
    close: () => db.close(),
  };
}
