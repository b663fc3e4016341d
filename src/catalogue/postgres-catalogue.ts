import type { Clock } from '../clock.js';
import type { PostgresSql, PostgresTransaction } from '../db/postgres.js';
import type { ChangeCount } from '../db/postgres-change-count.js';
import { multiPolygonBounds } from '../geo/polygon.js';
import {
  compareInOrder,
  type GroupQuery,
  hasTagFilter,
  type Reservation,
  type RetiredFile,
  type SurveyCatalogue,
  type SurveyGroup,
  type SurveyOrderKey,
  type SurveyPage,
  type SurveySearch,
  type SurveyView,
  type SurveyWalk,
  type SurveyWalkPage,
  type TagExtent,
  type TagFilter,
} from './catalogue.js';
import { footprintNumbers, packedBoxInside, packedBoxIntersects, packFootprint } from './packed-footprint.js';
import { postgresGroupsInsert } from './postgres-catalogue-schema.js';
import { ListingBatches } from './postgres-listing-batches.js';
import { CONTENT_TYPES, type Survey } from './survey.js';
import {
  GROUP_COLUMNS,
  type GroupRow,
  groupsOfSurvey,
  splitPatterns,
  TAG_EXTENT_COLUMNS,
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

/** A search's candidate: the order keys and packed footprint, and the document or the listing. */
type CandidateRow = Pick<ListingRow, 'id' | 'captureDate' | 'lastPhotoTime'> &
  Pick<DocumentRow, 'outline'> &
  Partial<DocumentRow & ListingRow>;

/**
 * The catalogue on PostgreSQL/PostGIS, for several servers sharing one database. Footprints are
 * PostGIS geometry under a GiST index, so a search is one statement: the index finds footprints
 * whose box meets the area and the date, type and tag filters run there; the exact footprint test,
 * the order and the page are then decided as in SQLite, on the packed footprint
 * (packed-footprint.ts), so both engines answer alike. PostGIS's own exact test (ST_Relate with
 * an interior pattern) cost 50-100 us per candidate, most of a search's time (bench/scale).
 * The survey itself is the same JSON document as in SQLite
 * (survey-rows.ts), its footprint also packed, so it comes back exactly as it was put.
 * Text columns that order or compare are `COLLATE "C"`: the same code-unit order as JavaScript
 * and SQLite, whatever locale the database was created with.
 */
export class PostgresSurveyCatalogue implements SurveyCatalogue {
  readonly #sql: PostgresSql;
  readonly #changes: ChangeCount;
  readonly #now: Clock;
  readonly #listings: ListingBatches<CandidateRow>;

  /**
   * The migrations must have run (composition.ts); `changes` follows `catalogue_changes`; `now`
   * is when versions are reserved and files retired.
   */
  constructor(sql: PostgresSql, changes: ChangeCount, now: Clock) {
    this.#sql = sql;
    this.#changes = changes;
    this.#now = now;
    this.#listings = new ListingBatches(sql);
  }

  async put(survey: Survey): Promise<void> {
    mustStore(survey.id);
    const bounds = multiPolygonBounds(survey.footprint);
    if (!Number.isFinite(bounds.minX)) throw new Error(`survey ${survey.id} has an empty footprint`);
    const geometry = JSON.stringify({ type: 'MultiPolygon', coordinates: survey.footprint });
    const types = CONTENT_TYPES.filter((type) => survey.assets[type]);
    const row = {
      id: survey.id,
      capture_date: survey.captureDate,
      last_photo_time: survey.lastPhotoTime,
      version: survey.version,
      type_mask: typeMask(types),
      tags: survey.tags,
      outline: Buffer.from(packFootprint(survey.footprint)),
      listing: listingJson(survey),
      body: documentJson(survey),
    };
    await this.#sql.begin(async (sql) => {
      const previous = await this.#retire(sql, survey.id, new Set(assetLocations(survey)));
      await sql`
        INSERT INTO surveys (id, capture_date, last_photo_time, version, type_mask, tags, footprint, outline, listing, body)
        VALUES (${row.id}, ${row.capture_date}, ${row.last_photo_time}, ${row.version}, ${row.type_mask},
          ${row.tags}, ST_Multi(ST_SetSRID(ST_GeomFromGeoJSON(${geometry}), 4326)), ${row.outline}, ${row.listing}, ${row.body})
        ON CONFLICT (id) DO UPDATE SET capture_date = excluded.capture_date, last_photo_time = excluded.last_photo_time,
          version = excluded.version, type_mask = excluded.type_mask, tags = excluded.tags, footprint = excluded.footprint,
          outline = excluded.outline, listing = excluded.listing, body = excluded.body`;
      await sql`
        INSERT INTO survey_versions (id, last_version) VALUES (${row.id}, ${row.version})
        ON CONFLICT (id) DO UPDATE SET last_version = GREATEST(survey_versions.last_version, excluded.last_version)`;
      if (previous) await this.#regroup(sql, [row.capture_date, previous]);
      else await this.#addToGroups(sql, groupsOfSurvey(survey, bounds));
    });
    await this.#changes.refresh();
  }

  /** Within put's transaction: a new survey merged into its groups, under its date's lock (#regroup). */
  async #addToGroups(sql: PostgresTransaction, groups: SurveyGroup[]): Promise<void> {
    const date = groups[0]?.captureDate as string;
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`nadir survey groups ${date}`}, 0))`;
    const column = <T>(pick: (group: SurveyGroup) => T) => groups.map(pick);
    await sql`
      INSERT INTO survey_groups (${sql.unsafe(GROUP_COLUMNS)})
      SELECT type, tag, ${date}, 1, min_x, min_y, max_x, max_y, ${groups[0]?.firstPhotoTime as string},
        ${groups[0]?.lastPhotoTime as string}, min_zoom, max_zoom
      FROM unnest(${column((g) => g.type)}::text[], ${column((g) => g.tag)}::text[],
        ${column((g) => g.bounds.minX)}::float8[], ${column((g) => g.bounds.minY)}::float8[],
        ${column((g) => g.bounds.maxX)}::float8[], ${column((g) => g.bounds.maxY)}::float8[],
        ${column((g) => g.minZoom)}::int[], ${column((g) => g.maxZoom)}::int[])
        AS g(type, tag, min_x, min_y, max_x, max_y, min_zoom, max_zoom)
      ON CONFLICT (content_type, tag, capture_date) DO UPDATE SET surveys = survey_groups.surveys + 1,
        min_x = LEAST(survey_groups.min_x, excluded.min_x), min_y = LEAST(survey_groups.min_y, excluded.min_y),
        max_x = GREATEST(survey_groups.max_x, excluded.max_x), max_y = GREATEST(survey_groups.max_y, excluded.max_y),
        first_photo_time = LEAST(survey_groups.first_photo_time, excluded.first_photo_time),
        last_photo_time = GREATEST(survey_groups.last_photo_time, excluded.last_photo_time),
        min_zoom = LEAST(survey_groups.min_zoom, excluded.min_zoom), max_zoom = GREATEST(survey_groups.max_zoom, excluded.max_zoom)`;
  }

  /**
   * Within put's or delete's transaction: the groups of these capture dates, computed again. A
   * lock per date, so a put of another server on the same date computes after this commits and
   * sees its survey (read committed: each statement sees what committed before it began).
   */
  async #regroup(sql: PostgresTransaction, dates: string[]): Promise<void> {
    const unique = [...new Set(dates)].sort();
    for (const date of unique)
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`nadir survey groups ${date}`}, 0))`;
    await sql`DELETE FROM survey_groups WHERE capture_date = ANY(${unique}::text[])`;
    await sql.unsafe(postgresGroupsInsert('s.capture_date = ANY($1::text[])'), [unique]);
  }

  async get(id: string): Promise<Survey | undefined> {
    if (!storable(id)) return undefined;
    const [row] = await this.#sql<DocumentRow[]>`SELECT body, outline FROM surveys WHERE id = ${id}`;
    return row ? toSurvey(row) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    if (!storable(id)) return false;
    const deleted = await this.#sql.begin(async (sql) => {
      const previous = await this.#retire(sql, id, new Set());
      const result = await sql`DELETE FROM surveys WHERE id = ${id}`;
      if (previous) await this.#regroup(sql, [previous]);
      return result;
    });
    if (deleted.count > 0) await this.#changes.refresh();
    return deleted.count > 0;
  }

  /**
   * Within put's or delete's transaction: the survey's files that `kept` does not name are retired
   * now. Returns the stored survey's capture date (undefined when there is none).
   */
  async #retire(sql: PostgresTransaction, id: string, kept: ReadonlySet<string>): Promise<string | undefined> {
    const [row] = await sql<{ body: string; capture_date: string }[]>`
      SELECT body, capture_date FROM surveys WHERE id = ${id} FOR UPDATE`;
    if (!row) return undefined;
    const retired = assetLocations(JSON.parse(row.body) as Survey).filter((location) => !kept.has(location));
    if (retired.length > 0) {
      await sql`
        INSERT INTO retired_files (location, retired_at)
        SELECT unnest(${retired}::text[]), ${this.#now().toISOString()} ON CONFLICT DO NOTHING`;
    }
    return row.capture_date;
  }

  async retiredFiles(): Promise<RetiredFile[]> {
    const rows = await this.#sql<{ location: string; retired_at: string }[]>`
      SELECT location, retired_at FROM retired_files ORDER BY retired_at, location`;
    return rows.map((row) => ({ location: row.location, retiredAt: row.retired_at }));
  }

  async forgetRetired(locations: readonly string[]): Promise<void> {
    if (locations.length === 0) return;
    await this.#sql`DELETE FROM retired_files WHERE location = ANY(${locations as string[]}::text[])`;
  }

  async reservations(): Promise<Map<string, Reservation>> {
    const rows = await this.#sql<{ id: string; last_version: number; reserved_at: string | null }[]>`
      SELECT id, last_version, reserved_at FROM survey_versions`;
    return new Map(
      rows.map((row) => [row.id, { version: row.last_version, reservedAt: row.reserved_at ?? undefined }]),
    );
  }

  async reserveVersion(id: string): Promise<number> {
    mustStore(id);
    // Versions never repeat, even after a delete: caches keyed by (id, version) stay correct.
    const [row] = await this.#sql<{ last_version: number }[]>`
      INSERT INTO survey_versions (id, last_version, reserved_at) VALUES (${id}, 1, ${this.#now().toISOString()})
      ON CONFLICT (id) DO UPDATE SET last_version = survey_versions.last_version + 1, reserved_at = excluded.reserved_at
      RETURNING last_version`;
    return (row as { last_version: number }).last_version;
  }

  async search<V extends SurveyView = 'document'>(query: SurveySearch<V>): Promise<SurveyPage<V>> {
    const listing = query.view === 'listing';
    const matches = await this.#matchingCandidates(query, listing ? 'listing' : 'document');
    const page = matches.slice(query.offset, query.offset + query.limit);
    const surveys = listing
      ? page.map((row) => toListing(row as ListingRow))
      : page.map((row) => toSurvey(row as DocumentRow));
    return { surveys, total: matches.length } as SurveyPage<V>;
  }

  /** Every candidate of the area that passes every test, in the query's order (the GiST index first). */
  async #matchingCandidates(
    query: Omit<SurveySearch<SurveyView>, 'limit' | 'offset'>,
    view: SurveyView,
  ): Promise<CandidateRow[]> {
    const rows = await this.#candidates(query, view);
    const exact = query.overlap === 'full' ? packedBoxInside : packedBoxIntersects;
    return rows
      .filter((row) => exact(query.area, footprintNumbers(row.outline)))
      .sort((a, b) => compareInOrder(a, b, query.order));
  }

  #candidates(query: Omit<SurveySearch<SurveyView>, 'limit' | 'offset'>, view: SurveyView): Promise<CandidateRow[]> {
    const sql = this.#sql;
    if (view === 'listing' && query.since === undefined && query.until === undefined && !hasTagFilter(query.tags)) {
      // A coverage search: with the others of this turn, by the functions with one plan
      // (postgres-listing-batches.ts, postgres-catalogue-schema.ts).
      const mask = typeMask(query.types ?? []);
      return this.#listings.candidates({ area: query.area, mask, matchAll: query.typeMatch !== 'any' });
    }
    const columns = view === 'listing' ? sql`version, tags, listing` : sql`body`;
    return sql<CandidateRow[]>`
      SELECT id, capture_date AS "captureDate", last_photo_time AS "lastPhotoTime", outline, ${columns}
      FROM surveys WHERE ${this.#where(query)}`;
  }

  async walk(query: SurveyWalk): Promise<SurveyWalkPage> {
    const sql = this.#sql;
    const order = query.order ?? 'newest';
    const { minX, minY, maxX, maxY } = query.area;
    const [probe] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM (SELECT 1 FROM surveys
        WHERE footprint && ST_MakeEnvelope(${minX}, ${minY}, ${maxX}, ${maxY}, 4326) LIMIT ${WHOLE_AREA_CANDIDATES + 1}) c`;
    if ((probe?.n ?? 0) <= WHOLE_AREA_CANDIDATES) {
      // A small area: its candidates at once (the GiST index), then a batch at a time.
      const rows = await this.#matchingCandidates(query, 'document');
      return walkSurveys(query, async (after, count) => {
        const start = rows.findIndex((row) => isAfter(row, after, order));
        const batch = start < 0 ? [] : rows.slice(start, start + count);
        const last = batch.at(-1);
        return {
          surveys: batch.map((row) => toSurvey(row as DocumentRow)),
          last: last && orderKeyOf(last),
          rows: batch.length,
          exhausted: start < 0 || start + count >= rows.length,
        };
      });
    }
    // A wide area: the order's index, in order, from the place.
    return walkSurveys(query, async (after, count) => {
      const rows = await this.#ordered(query, order, after, count);
      const passed = rows.filter((row) => packedBoxIntersects(query.area, footprintNumbers(row.outline)));
      const last = rows.at(-1);
      return {
        surveys: passed.map((row) => toSurvey(row)),
        last: last && orderKeyOf(last),
        rows: rows.length,
        exhausted: rows.length < count,
      };
    });
  }

  /** The next `count` candidates after `after` in `order`, by the surveys_newest index. */
  #ordered(query: SurveyWalk, order: 'newest' | 'oldest', after: SurveyOrderKey | undefined, count: number) {
    const sql = this.#sql;
    type Row = DocumentRow & SurveyOrderKey;
    // The box as a plain filter, not the GiST index's: the walk must follow the order's index.
    const where = this.#where(query, false);
    if (order === 'newest') {
      const place = after ?? { captureDate: '9999-99-99', lastPhotoTime: '', id: '' };
      return sql<Row[]>`
        SELECT id, capture_date AS "captureDate", last_photo_time AS "lastPhotoTime", outline, body FROM surveys
        WHERE ${where} AND capture_date <= ${place.captureDate} AND (capture_date < ${place.captureDate}
          OR last_photo_time < ${place.lastPhotoTime} OR (last_photo_time = ${place.lastPhotoTime} AND id > ${place.id}))
        ORDER BY capture_date DESC, last_photo_time DESC, id LIMIT ${count}`;
    }
    const place = after ?? { captureDate: '0000-00-00', lastPhotoTime: '', id: '' };
    return sql<Row[]>`
      SELECT id, capture_date AS "captureDate", last_photo_time AS "lastPhotoTime", outline, body FROM surveys
      WHERE ${where} AND capture_date >= ${place.captureDate} AND (capture_date > ${place.captureDate}
        OR last_photo_time > ${place.lastPhotoTime} OR (last_photo_time = ${place.lastPhotoTime} AND id < ${place.id}))
      ORDER BY capture_date, last_photo_time, id DESC LIMIT ${count}`;
  }

  async groups(query: GroupQuery): Promise<SurveyGroup[]> {
    const sql = this.#sql;
    const rows = await sql<GroupRow[]>`
      SELECT ${sql.unsafe(GROUP_COLUMNS)} FROM survey_groups WHERE ${this.#groupsWhere(query)}
      ORDER BY capture_date DESC, tag`;
    return rows.map(toGroup);
  }

  async extents(query: GroupQuery): Promise<TagExtent[]> {
    const sql = this.#sql;
    const rows = await sql<TagExtentRow[]>`
      SELECT ${sql.unsafe(TAG_EXTENT_COLUMNS)}, string_agg(capture_date, ',' ORDER BY capture_date DESC) AS dates
      FROM survey_groups WHERE ${this.#groupsWhere(query)} GROUP BY tag ORDER BY tag`;
    return rows.map(toTagExtent);
  }

  #groupsWhere(query: GroupQuery) {
    const sql = this.#sql;
    const tags =
      query.tags === 'none'
        ? sql`tag = ''`
        : query.tags === 'all'
          ? sql`TRUE`
          : sql`tag <> '' AND (tag = ANY(${splitPatterns(query.tags).exact}::text[])
              OR split_part(tag, ':', 1) = ANY(${splitPatterns(query.tags).typed}::text[]) AND strpos(tag, ':') > 0)`;
    return sql`content_type = ${query.type ?? ''} AND capture_date >= ${query.since ?? '0000-00-00'}
      AND capture_date <= ${query.until ?? '9999-99-99'} AND ${tags}`;
  }

  /** The index's box test and every filter but the exact footprint test. */
  #where(query: Omit<SurveySearch<SurveyView>, 'limit' | 'offset'>, byIndex = true) {
    const sql = this.#sql;
    const { minX, minY, maxX, maxY } = query.area;
    const box = byIndex
      ? sql`footprint && ST_MakeEnvelope(${minX}, ${minY}, ${maxX}, ${maxY}, 4326)`
      : sql`ST_XMax(footprint) >= ${minX} AND ST_XMin(footprint) <= ${maxX}
          AND ST_YMax(footprint) >= ${minY} AND ST_YMin(footprint) <= ${maxY}`;
    const mask = typeMask(query.types ?? []);
    const types =
      mask === 0
        ? sql`TRUE`
        : query.typeMatch === 'any'
          ? sql`(type_mask & ${mask}) <> 0`
          : sql`(type_mask & ${mask}) = ${mask}`;
    return sql`${box}
      AND capture_date >= ${query.since ?? '0000-00-00'} AND capture_date <= ${query.until ?? '9999-99-99'}
      AND ${types} AND ${this.#tags(query.tags)}`;
  }

  /** catalogue.ts `matchesTags` in SQL: `disaster` matches every `disaster:*`, `disaster:fire` only itself. */
  #tags(filter: TagFilter | undefined) {
    const sql = this.#sql;
    const matching = (patterns: string[]) => sql`EXISTS (
      SELECT 1 FROM unnest(tags) AS t, unnest(${patterns}::text[]) AS p
      WHERE t = p OR (strpos(p, ':') = 0 AND strpos(t, ':') > 0 AND split_part(t, ':', 1) = p))`;
    const include = filter?.include?.length ? matching(filter.include) : sql`TRUE`;
    const exclude = filter?.exclude?.length ? sql`NOT ${matching(filter.exclude)}` : sql`TRUE`;
    return sql`${include} AND ${exclude}`;
  }

  async referencedFiles(): Promise<Set<string>> {
    const uris = new Set<string>();
    // The documents in JS: a sharded asset's files are named by its shard list (geo/asset-layout.ts).
    const rows = await this.#sql<{ assets: string }[]>`SELECT body::jsonb->>'assets' AS assets FROM surveys`;
    for (const { assets } of rows) {
      for (const location of assetLocations({ assets: JSON.parse(assets) as Survey['assets'] })) uris.add(location);
    }
    return uris;
  }

  async count(): Promise<number> {
    // From the maintained groups (every survey once in its date's group of any type and tag):
    // count(*) reads every row, 10-30 ms at 100,000 surveys, and STAC asks on every page.
    const [row] = await this.#sql<{ n: string }[]>`
      SELECT coalesce(sum(surveys), 0)::text AS n FROM survey_groups WHERE content_type = '' AND tag = ''`;
    return Number(row?.n);
  }

  changeMarker(): string {
    return this.#changes.marker;
  }

  async ping(): Promise<void> {
    await this.#sql`SELECT 1`;
  }

  async close(): Promise<void> {
    // The pool and the change follower belong to the composition root, which closes them.
  }
}
