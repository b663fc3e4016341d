/**
 * A search's candidates in the SQLite catalogue: surveys whose footprint bounds meet the area
 * (the R*Tree) and whose date and types match, with what the exact test, the tag filter and the
 * ordering need, and for listings the listing itself.
 *
 * Two things here are about cost, both measured on 1M surveys (bench/coverage):
 * - A statement that compares an indexed column with a parameter (capture_date, which leads the
 *   surveys_newest index) is planned again at every new binding: SQLite's STAT4 may pick another
 *   plan for other values ("sqlite3_prepare_v2", sqlite.org/c3ref/prepare.html). A search with no
 *   date filter therefore uses a statement without the date test, planned once: the planner's
 *   work was a fifth of the statement's time (113 against 145 us a search).
 * - Rows are read as arrays and given their names here, in one object shape: better-sqlite3
 *   builds a row object one named property at a time, which cost more than the row's reading.
 */
import type { SqliteDatabase } from '../db/sqlite.js';
import type { Bounds } from '../geo/web-mercator.js';
import type { SurveyOrderKey, SurveySearch, SurveyView } from './catalogue.js';
import type { ListingRow } from './survey-rows.js';
import { typeMask } from './survey-rows.js';

/** What a search decides on before it reads any survey document (and a listing's columns). */
export interface CandidateRow extends SurveyOrderKey, Partial<Pick<ListingRow, 'version' | 'listing'>> {
  rowid: number;
  outline: Buffer;
  tags: string;
}

/**
 * The candidate statement. `dated`: with the date test (`@since`, `@until`). Exported for the
 * benchmark, whose floor is this statement alone.
 */
export function candidatesSql(view: SurveyView, dated: boolean): string {
  return `SELECT s.rowid, s.id, s.capture_date, s.last_photo_time, s.tags, s.outline
      ${view === 'listing' ? ', s.version, s.listing' : ''}
    FROM survey_extent e JOIN surveys s ON s.rowid = e.survey_rowid
    WHERE e.max_x >= @minX AND e.min_x <= @maxX AND e.max_y >= @minY AND e.min_y <= @maxY
      ${dated ? 'AND s.capture_date >= @since AND s.capture_date <= @until' : ''}
      AND (@mask = 0 OR (CASE WHEN @all THEN (s.type_mask & @mask) = @mask ELSE (s.type_mask & @mask) != 0 END))`;
}

/** candidatesSql's parameters for a query. */
export function candidateParameters(
  query: Pick<SurveySearch<SurveyView>, 'area' | 'since' | 'until' | 'types' | 'typeMatch'>,
): Bounds & { mask: number; all: number; since?: string; until?: string } {
  const parameters = {
    ...query.area,
    mask: typeMask(query.types ?? []),
    all: query.typeMatch === 'any' ? 0 : 1,
  };
  if (!isDated(query)) return parameters;
  return { ...parameters, since: query.since ?? '0000-00-00', until: query.until ?? '9999-99-99' };
}

function isDated(query: Pick<SurveySearch<SurveyView>, 'since' | 'until'>): boolean {
  return query.since !== undefined || query.until !== undefined;
}

type Statement = ReturnType<SqliteDatabase['prepare']>;

/** The candidate statements of one connection, by view and by whether the query has dates. */
export class SqliteCandidates {
  readonly #statements: Record<SurveyView, { dated: Statement; undated: Statement }>;

  constructor(db: SqliteDatabase) {
    const prepare = (view: SurveyView, dated: boolean) => db.prepare(candidatesSql(view, dated)).raw(true);
    this.#statements = {
      document: { dated: prepare('document', true), undated: prepare('document', false) },
      listing: { dated: prepare('listing', true), undated: prepare('listing', false) },
    };
  }

  read(
    query: Pick<SurveySearch<SurveyView>, 'area' | 'since' | 'until' | 'types' | 'typeMatch'>,
    view: SurveyView,
  ): CandidateRow[] {
    const statement = this.#statements[view][isDated(query) ? 'dated' : 'undated'];
    const rows = statement.all(candidateParameters(query)) as unknown[][];
    return rows.map(candidateRow);
  }
}

function candidateRow(row: unknown[]): CandidateRow {
  return {
    rowid: row[0] as number,
    id: row[1] as string,
    captureDate: row[2] as string,
    lastPhotoTime: row[3] as string,
    tags: row[4] as string,
    outline: row[5] as Buffer,
    version: row[6] as number | undefined,
    listing: row[7] as string | undefined,
  };
}
