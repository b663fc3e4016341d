import type { Clock } from '../clock.js';
import { migrate, type SqliteDatabase } from '../db/sqlite.js';
import { type MultiPolygon, multiPolygonBounds } from '../geo/polygon.js';
import {
  compareInOrder,
  type GroupQuery,
  hasTagFilter,
  matchesTags,
  type Reservation,
  type RetiredFile,
  type SurveyCatalogue,
  type SurveyGroup,
  type SurveyPage,
  type SurveySearch,
  type SurveyView,
  type SurveyWalk,
  type SurveyWalkPage,
  type TagExtent,
} from './catalogue.js';
import {
  footprintNumbers,
  packedBounds,
  packedBoxInside,
  packedBoxIntersects,
  packFootprint,
} from './packed-footprint.js';
import { type CandidateRow, SqliteCandidates } from './sqlite-candidates.js';
import {
  groupParameters,
  groupParams,
  groupsSql,
  SQLITE_CATALOGUE_MIGRATIONS,
  sqliteGroupsInsert,
} from './sqlite-catalogue-schema.js';
import { CONTENT_TYPES, type Survey } from './survey.js';
import {
  GROUP_COLUMNS,
  type GroupRow,
  groupsOfSurvey,
  type TagExtentRow,
  toGroup,
  toTagExtent,
} from './survey-groups.js';
import {
  assetLocations,
  type DocumentRow,
  documentJson,
  type ListingRow,
  listingJson,
  mustStore,
  storable,
  toListing,
  toSurvey,
  typeMask,
} from './survey-rows.js';
import { isAfter, orderKeyOf, walkSurveys } from './survey-walk.js';

/** Candidates a small area may have for a walk to read them all at once rather than walk the order. */
const WHOLE_AREA_CANDIDATES = 1000;

/**
 * The next candidates after a place in the order, walking the order's index (not the R*Tree, whose
 * area holds too many surveys for that): the R*Tree is asked only about each row's box.
 * `@date`/`@time`/`@id` is the place; without one, a date past any real one.
 */
function orderedCandidatesSql(order: 'newest' | 'oldest'): string {
  const [before, dir, idDir, idBefore] = order === 'newest' ? ['<', 'DESC', '', '>'] : ['>', '', 'DESC', '<'];
  return `SELECT s.rowid, s.id, s.capture_date AS captureDate, s.last_photo_time AS lastPhotoTime, s.tags, s.outline, s.body
    FROM surveys AS s INDEXED BY surveys_newest
    CROSS JOIN survey_extent AS e ON e.survey_rowid = s.rowid
    WHERE s.capture_date ${before}= @date
      AND (s.capture_date ${before} @date OR s.last_photo_time ${before} @time OR (s.last_photo_time = @time AND s.id ${idBefore} @id))
      AND s.capture_date >= @since AND s.capture_date <= @until
      AND e.max_x >= @minX AND e.min_x <= @maxX AND e.max_y >= @minY AND e.min_y <= @maxY
      AND (@mask = 0 OR (CASE WHEN @all THEN (s.type_mask & @mask) = @mask ELSE (s.type_mask & @mask) != 0 END))
    ORDER BY s.capture_date ${dir}, s.last_photo_time ${dir}, s.id ${idDir}
    LIMIT @rows`;
}

interface OrderedRow extends CandidateRow {
  body: string;
}

interface PageRow extends DocumentRow {
  rowid: number;
}

/**
 * The catalogue in the embedded SQLite file: an R*Tree on footprint bounds narrows a search to
 * candidates, then the exact footprint polygon decides. The survey itself is one JSON document.
 */
export class SqliteSurveyCatalogue implements SurveyCatalogue {
  readonly #db: SqliteDatabase;
  /** The catalogue's schema version in the file, once migrated. */
  readonly schemaVersion: number;
  /** PRAGMA data_version only moves for other connections' commits; this counts our own. */
  #ownWrites = 0;
  #seenDataVersion = -1;
  /** catalogue_changes as last read. */
  #changes = 0;
  readonly #statements;
  readonly #candidates: SqliteCandidates;
  readonly #now: Clock;

  /** `now`: when versions are reserved and files retired. */
  constructor(db: SqliteDatabase, now: Clock) {
    this.#db = db;
    this.#now = now;
    // Used by migrations 2 and 3 only, on the rows they convert.
    db.function('nadir_pack_footprint', { deterministic: true }, (text) =>
      packFootprint(JSON.parse(String(text)) as MultiPolygon),
    );
    db.function('nadir_listing', { deterministic: true }, (body) => listingJson(JSON.parse(String(body)) as Survey));
    // The survey groups' boxes (sqliteGroupsInsert), in migrations and in every put and delete.
    db.function('nadir_outline_bound', { deterministic: true }, (outline, side) => {
      return packedBounds(footprintNumbers(outline as Buffer))[Number(side)] as number;
    });
    this.schemaVersion = migrate(db, SQLITE_CATALOGUE_MIGRATIONS);
    this.#candidates = new SqliteCandidates(db);
    this.#statements = {
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
      changes: db.prepare('SELECT changes FROM catalogue_changes').pluck(),
      rowidOf: db.prepare('SELECT rowid, capture_date AS captureDate FROM surveys WHERE id = ?'),
      addToGroup: db.prepare(
        `INSERT INTO survey_groups (${GROUP_COLUMNS})
         VALUES (@type, @tag, @date, 1, @minX, @minY, @maxX, @maxY, @first, @last, @minZoom, @maxZoom)
         ON CONFLICT (content_type, tag, capture_date) DO UPDATE SET surveys = surveys + 1,
           min_x = min(min_x, excluded.min_x), min_y = min(min_y, excluded.min_y),
           max_x = max(max_x, excluded.max_x), max_y = max(max_y, excluded.max_y),
           first_photo_time = min(first_photo_time, excluded.first_photo_time),
           last_photo_time = max(last_photo_time, excluded.last_photo_time),
           min_zoom = min(min_zoom, excluded.min_zoom), max_zoom = max(max_zoom, excluded.max_zoom)`,
      ),
      dropGroups: db.prepare('DELETE FROM survey_groups WHERE capture_date IN (SELECT value FROM json_each(?))'),
      computeGroups: db.prepare(sqliteGroupsInsert('s.capture_date IN (SELECT value FROM json_each(@dates))')),
      groups: {
        none: db.prepare(groupsSql('none')),
        all: db.prepare(groupsSql('all')),
        patterns: db.prepare(groupsSql('patterns')),
      },
      extents: {
        none: db.prepare(groupsSql('none', true)),
        all: db.prepare(groupsSql('all', true)),
        patterns: db.prepare(groupsSql('patterns', true)),
      },
      areaCandidates: db
        .prepare(
          'SELECT count(*) FROM (SELECT 1 FROM survey_extent WHERE max_x >= @minX AND min_x <= @maxX AND max_y >= @minY AND min_y <= @maxY LIMIT @limit)',
        )
        .pluck(),
      ordered: {
        newest: db.prepare(orderedCandidatesSql('newest')),
        oldest: db.prepare(orderedCandidatesSql('oldest')),
      },
      deleteSurvey: db.prepare('DELETE FROM surveys WHERE rowid = ?'),
      deleteExtent: db.prepare('DELETE FROM survey_extent WHERE survey_rowid = ?'),
      insertSurvey: db.prepare(
        `INSERT INTO surveys (id, capture_date, last_photo_time, version, type_mask, tags, outline, listing, body)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertExtent: db.prepare(
        'INSERT INTO survey_extent (survey_rowid, min_x, max_x, min_y, max_y) VALUES (?, ?, ?, ?, ?)',
      ),
      bumpVersion: db.prepare(
        `INSERT INTO survey_versions (id, last_version) VALUES (?, ?)
         ON CONFLICT (id) DO UPDATE SET last_version = max(last_version, excluded.last_version)`,
      ),
      reserveVersion: db.prepare(
        `INSERT INTO survey_versions (id, last_version, reserved_at) VALUES (?, 1, ?)
         ON CONFLICT (id) DO UPDATE SET last_version = last_version + 1, reserved_at = excluded.reserved_at
         RETURNING last_version`,
      ),
      reservations: db.prepare('SELECT id, last_version, reserved_at FROM survey_versions'),
      body: db.prepare('SELECT body FROM surveys WHERE id = ?').pluck(),
      retire: db.prepare('INSERT INTO retired_files (location, retired_at) VALUES (?, ?) ON CONFLICT DO NOTHING'),
      retired: db.prepare('SELECT location, retired_at FROM retired_files ORDER BY retired_at, location'),
      forget: db.prepare('DELETE FROM retired_files WHERE location = ?'),
      get: db.prepare('SELECT body, outline FROM surveys WHERE id = ?'),
      page: db.prepare('SELECT rowid, body, outline FROM surveys WHERE rowid IN (SELECT value FROM json_each(?))'),
      all: db.prepare('SELECT body, outline FROM surveys'),
      // From the maintained groups (every survey once in its date's group of any type and tag):
      // count(*) reads a whole index, 60 ms at 100,000 surveys when it is not in the page cache.
      count: db.prepare(
        "SELECT coalesce(sum(surveys), 0) AS n FROM survey_groups WHERE content_type = '' AND tag = ''",
      ),
    };
  }

  async put(survey: Survey): Promise<void> {
    mustStore(survey.id);
    const s = this.#statements;
    const bounds = multiPolygonBounds(survey.footprint);
    if (!Number.isFinite(bounds.minX)) throw new Error(`survey ${survey.id} has an empty footprint`);
    const outline = packFootprint(survey.footprint);
    const types = CONTENT_TYPES.filter((type) => survey.assets[type]);
    const kept = new Set(assetLocations(survey));
    this.#db
      .transaction(() => {
        const existing = s.rowidOf.get(survey.id) as { rowid: number; captureDate: string } | undefined;
        if (existing) {
          this.#retire(survey.id, kept);
          s.deleteExtent.run(existing.rowid);
          s.deleteSurvey.run(existing.rowid);
        }
        const { lastInsertRowid } = s.insertSurvey.run(
          survey.id,
          survey.captureDate,
          survey.lastPhotoTime,
          survey.version,
          typeMask(types),
          JSON.stringify(survey.tags),
          outline,
          listingJson(survey),
          documentJson(survey),
        );
        s.insertExtent.run(lastInsertRowid, bounds.minX, bounds.maxX, bounds.minY, bounds.maxY);
        s.bumpVersion.run(survey.id, survey.version);
        if (existing) this.#regroup([survey.captureDate, existing.captureDate]);
        else for (const group of groupsOfSurvey(survey, bounds)) s.addToGroup.run(groupParams(group));
      })
      .immediate();
    this.#ownWrites++;
  }

  async get(id: string): Promise<Survey | undefined> {
    if (!storable(id)) return undefined;
    const row = this.#statements.get.get(id) as DocumentRow | undefined;
    return row ? toSurvey(row) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    if (!storable(id)) return false;
    const s = this.#statements;
    return this.#db
      .transaction(() => {
        const existing = s.rowidOf.get(id) as { rowid: number; captureDate: string } | undefined;
        if (!existing) return false;
        this.#retire(id, new Set());
        s.deleteExtent.run(existing.rowid);
        s.deleteSurvey.run(existing.rowid);
        this.#regroup([existing.captureDate]);
        this.#ownWrites++;
        return true;
      })
      .immediate();
  }

  /** Within put's or delete's transaction: the groups of these capture dates, computed again. */
  #regroup(dates: string[]): void {
    const json = JSON.stringify([...new Set(dates)]);
    this.#statements.dropGroups.run(json);
    this.#statements.computeGroups.run({ dates: json });
  }

  async reserveVersion(id: string): Promise<number> {
    mustStore(id);
    // Versions never repeat, even after a delete: caches keyed by (id, version) stay correct.
    const row = this.#statements.reserveVersion.get(id, this.#now().toISOString()) as { last_version: number };
    return row.last_version;
  }

  async reservations(): Promise<Map<string, Reservation>> {
    const rows = this.#statements.reservations.all() as {
      id: string;
      last_version: number;
      reserved_at: string | null;
    }[];
    return new Map(
      rows.map((row) => [row.id, { version: row.last_version, reservedAt: row.reserved_at ?? undefined }]),
    );
  }

  /** Within put's or delete's transaction: the survey's files that `kept` does not name are retired now. */
  #retire(id: string, kept: ReadonlySet<string>): void {
    const body = this.#statements.body.get(id) as string | undefined;
    if (body === undefined) return;
    const now = this.#now().toISOString();
    for (const location of assetLocations(JSON.parse(body) as Survey)) {
      if (!kept.has(location)) this.#statements.retire.run(location, now);
    }
  }

  async retiredFiles(): Promise<RetiredFile[]> {
    const rows = this.#statements.retired.all() as { location: string; retired_at: string }[];
    return rows.map((row) => ({ location: row.location, retiredAt: row.retired_at }));
  }

  async forgetRetired(locations: readonly string[]): Promise<void> {
    const forget = this.#db.transaction(() => {
      for (const location of locations) this.#statements.forget.run(location);
    });
    forget();
  }

  async search<V extends SurveyView = 'document'>(query: SurveySearch<V>): Promise<SurveyPage<V>> {
    const listing = query.view === 'listing';
    const matches = this.#matchingCandidates(query, listing ? 'listing' : 'document');
    const page = matches.slice(query.offset, query.offset + query.limit);
    const total = matches.length;
    if (listing) return { surveys: page.map((row) => toListing(row as ListingRow)), total } as SurveyPage<V>;
    return { surveys: this.#documents(page), total } as SurveyPage<V>;
  }

  /** Every candidate of the area that passes every test, in the query's order (the R*Tree first). */
  #matchingCandidates(query: Omit<SurveySearch<SurveyView>, 'limit' | 'offset'>, view: SurveyView): CandidateRow[] {
    const rows = this.#candidates.read(query, view);
    const { area } = query;
    const exact = query.overlap === 'full' ? packedBoxInside : packedBoxIntersects;
    const tagFilter = hasTagFilter(query.tags) ? query.tags : undefined;
    return rows
      .filter(
        (row) =>
          (!tagFilter || matchesTags(JSON.parse(row.tags) as string[], tagFilter)) &&
          exact(area, footprintNumbers(row.outline)),
      )
      .sort((a, b) => compareInOrder(a, b, query.order));
  }

  async walk(query: SurveyWalk): Promise<SurveyWalkPage> {
    const s = this.#statements;
    const order = query.order ?? 'newest';
    const whole =
      (s.areaCandidates.get({ ...query.area, limit: WHOLE_AREA_CANDIDATES + 1 }) as number) <= WHOLE_AREA_CANDIDATES;
    if (whole) {
      // A small area: its candidates at once, then the documents a batch at a time.
      const rows = this.#matchingCandidates(query, 'document');
      return walkSurveys(query, async (after, count) => {
        const start = rows.findIndex((row) => isAfter(row, after, order));
        const batch = start < 0 ? [] : rows.slice(start, start + count);
        const last = batch.at(-1);
        return {
          surveys: this.#documents(batch),
          last: last && orderKeyOf(last),
          rows: batch.length,
          exhausted: start < 0 || start + count >= rows.length,
        };
      });
    }
    const tagFilter = hasTagFilter(query.tags) ? query.tags : undefined;
    const params = {
      ...query.area,
      since: query.since ?? '0000-00-00',
      until: query.until ?? '9999-99-99',
      mask: typeMask(query.types ?? []),
      all: query.typeMatch === 'any' ? 0 : 1,
    };
    return walkSurveys(query, async (after, rows) => {
      const place = after ?? {
        captureDate: order === 'newest' ? '9999-99-99' : '0000-00-00',
        lastPhotoTime: '',
        id: '',
      };
      const read = s.ordered[order].all({
        ...params,
        date: place.captureDate,
        time: place.lastPhotoTime,
        id: place.id,
        rows,
      }) as OrderedRow[];
      const passed = read.filter(
        (row) =>
          (!tagFilter || matchesTags(JSON.parse(row.tags) as string[], tagFilter)) &&
          packedBoxIntersects(query.area, footprintNumbers(row.outline)),
      );
      const last = read.at(-1);
      return {
        surveys: passed.map((row) => toSurvey(row)),
        last: last && orderKeyOf(last),
        rows: read.length,
        exhausted: read.length < rows,
      };
    });
  }

  async groups(query: GroupQuery): Promise<SurveyGroup[]> {
    const mode = typeof query.tags === 'string' ? query.tags : 'patterns';
    return (this.#statements.groups[mode].all(groupParameters(query)) as GroupRow[]).map(toGroup);
  }

  async extents(query: GroupQuery): Promise<TagExtent[]> {
    const mode = typeof query.tags === 'string' ? query.tags : 'patterns';
    const rows = this.#statements.extents[mode].all(groupParameters(query)) as TagExtentRow[];
    return rows.map((row) => {
      const extent = toTagExtent(row);
      extent.captureDates.sort().reverse();
      return extent;
    });
  }

  /** Only the page's documents are read (a dense area can have hundreds of candidates), in one statement. */
  #documents(page: CandidateRow[]): Survey[] {
    if (page.length === 0) return [];
    const rows = this.#statements.page.all(JSON.stringify(page.map((row) => row.rowid))) as PageRow[];
    const byRowid = new Map(rows.map((row) => [row.rowid, row]));
    return page.map((row) => toSurvey(byRowid.get(row.rowid) as PageRow));
  }

  async referencedFiles(): Promise<Set<string>> {
    const uris = new Set<string>();
    for (const row of this.#statements.all.all() as DocumentRow[]) {
      for (const location of assetLocations(toSurvey(row))) uris.add(location);
    }
    return uris;
  }

  async count(): Promise<number> {
    return (this.#statements.count.get() as { n: number }).n;
  }

  /**
   * data_version is the cheap question (has any other connection committed?); only when it moved
   * is the catalogue's own change count read, so other tables' writes leave the marker alone.
   */
  changeMarker(): string {
    const dataVersion = this.#statements.dataVersion.get() as number;
    if (dataVersion !== this.#seenDataVersion) {
      this.#seenDataVersion = dataVersion;
      this.#changes = this.#statements.changes.get() as number;
    }
    return `${this.#changes}:${this.#ownWrites}`;
  }

  async ping(): Promise<void> {
    this.#statements.count.get();
  }

  async close(): Promise<void> {
    this.#db.close();
  }
}
