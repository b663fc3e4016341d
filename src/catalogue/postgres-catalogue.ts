import type { Clock } from '../clock.js';
import type { Migrations } from '../db/migrations.js';
import type { PostgresSql, PostgresTransaction } from '../db/postgres.js';
import type { ChangeCount } from '../db/postgres-changes.js';
import { multiPolygonBounds } from '../geo/polygon.js';
import {
  compareNewestFirst,
  type Reservation,
  type RetiredFile,
  type SurveyCatalogue,
  type SurveyPage,
  type SurveySearch,
  type SurveyView,
  type TagFilter,
} from './catalogue.js';
import { footprintNumbers, packedBoxInside, packedBoxIntersects, packFootprint } from './packed-footprint.js';
import { CONTENT_TYPES, type Survey } from './survey.js';
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
export const POSTGRES_CATALOGUE_MIGRATIONS: Migrations = {
  module: 'catalogue',
  steps: [
    `CREATE EXTENSION IF NOT EXISTS postgis;
     CREATE TABLE surveys (
       id text COLLATE "C" PRIMARY KEY,
       capture_date text COLLATE "C" NOT NULL,
       last_photo_time text COLLATE "C" NOT NULL,
       version integer NOT NULL,
       type_mask integer NOT NULL,
       tags text[] NOT NULL,
       footprint geometry(MultiPolygon, 4326) NOT NULL,
       outline bytea NOT NULL,
       listing text NOT NULL,
       body text NOT NULL
     );
     CREATE INDEX surveys_footprint ON surveys USING gist (footprint);
     CREATE TABLE survey_versions (id text COLLATE "C" PRIMARY KEY, last_version integer NOT NULL);`,
    // Every server caches answers until the catalogue changes: a count of changes, announced.
    `CREATE TABLE catalogue_changes (id integer PRIMARY KEY CHECK (id = 1), changes bigint NOT NULL);
     INSERT INTO catalogue_changes (id, changes) VALUES (1, 0);
     CREATE FUNCTION nadir_catalogue_changed() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       UPDATE catalogue_changes SET changes = changes + 1;
       PERFORM pg_notify('nadir_catalogue', '');
       RETURN NULL;
     END $$;
     CREATE TRIGGER surveys_changed AFTER INSERT OR UPDATE OR DELETE ON surveys
       FOR EACH STATEMENT EXECUTE FUNCTION nadir_catalogue_changed();`,
    // Survey files in object storage are removed after a grace period, not at once: when a
    // version was replaced (retired_files) and when an ingest began (reserved_at) say which.
    `ALTER TABLE survey_versions ADD COLUMN reserved_at text;
     CREATE TABLE retired_files (location text COLLATE "C" PRIMARY KEY, retired_at text NOT NULL);`,
  ],
};

/** A search's candidate: the order keys and packed footprint, and the document or the listing. */
type CandidateRow = Pick<ListingRow, 'id' | 'captureDate' | 'lastPhotoTime'> &
  Pick<DocumentRow, 'outline'> &
  Partial<DocumentRow & ListingRow>;

export class PostgresSurveyCatalogue implements SurveyCatalogue {
  readonly #sql: PostgresSql;
  readonly #changes: ChangeCount;
  readonly #now: Clock;

  /**
   * The migrations must have run (composition.ts); `changes` follows `catalogue_changes`; `now`
   * is when versions are reserved and files retired.
   */
  constructor(sql: PostgresSql, changes: ChangeCount, now: Clock) {
    this.#sql = sql;
    this.#changes = changes;
    this.#now = now;
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
      await this.#retire(sql, survey.id, new Set(assetLocations(survey)));
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
    });
    await this.#changes.refresh();
  }

  async get(id: string): Promise<Survey | undefined> {
    if (!storable(id)) return undefined;
    const [row] = await this.#sql<DocumentRow[]>`SELECT body, outline FROM surveys WHERE id = ${id}`;
    return row ? toSurvey(row) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    if (!storable(id)) return false;
    const deleted = await this.#sql.begin(async (sql) => {
      await this.#retire(sql, id, new Set());
      return sql`DELETE FROM surveys WHERE id = ${id}`;
    });
    if (deleted.count > 0) await this.#changes.refresh();
    return deleted.count > 0;
  }

  /** Within put's or delete's transaction: the survey's files that `kept` does not name are retired now. */
  async #retire(sql: PostgresTransaction, id: string, kept: ReadonlySet<string>): Promise<void> {
    const [row] = await sql<{ body: string }[]>`SELECT body FROM surveys WHERE id = ${id} FOR UPDATE`;
    if (!row) return;
    const retired = assetLocations(JSON.parse(row.body) as Survey).filter((location) => !kept.has(location));
    if (retired.length === 0) return;
    await sql`
      INSERT INTO retired_files (location, retired_at)
      SELECT unnest(${retired}::text[]), ${this.#now().toISOString()} ON CONFLICT DO NOTHING`;
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
    const sql = this.#sql;
    const listing = query.view === 'listing';
    const columns = listing ? sql`version, tags, listing` : sql`body`;
    const rows = await sql<CandidateRow[]>`
      SELECT id, capture_date AS "captureDate", last_photo_time AS "lastPhotoTime", outline, ${columns}
      FROM surveys WHERE ${this.#where(query)}`;
    const exact = query.overlap === 'full' ? packedBoxInside : packedBoxIntersects;
    const matches = rows
      .filter((row) => exact(query.area, footprintNumbers(row.outline)))
      .sort(query.order === 'oldest' ? (a, b) => compareNewestFirst(b, a) : compareNewestFirst);
    const page = matches.slice(query.offset, query.offset + query.limit);
    const surveys = listing
      ? page.map((row) => toListing(row as ListingRow))
      : page.map((row) => toSurvey(row as DocumentRow));
    return { surveys, total: matches.length } as SurveyPage<V>;
  }

  /** The index's box test and every filter but the exact footprint test. */
  #where(query: SurveySearch<SurveyView>) {
    const sql = this.#sql;
    const { minX, minY, maxX, maxY } = query.area;
    const mask = typeMask(query.types ?? []);
    const types =
      mask === 0
        ? sql`TRUE`
        : query.typeMatch === 'any'
          ? sql`(type_mask & ${mask}) <> 0`
          : sql`(type_mask & ${mask}) = ${mask}`;
    return sql`footprint && ST_MakeEnvelope(${minX}, ${minY}, ${maxX}, ${maxY}, 4326)
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
    const [row] = await this.#sql<{ n: string }[]>`SELECT count(*)::text AS n FROM surveys`;
    return Number(row?.n);
  }

  async changeMarker(): Promise<string> {
    return this.#changes.marker;
  }

  async ping(): Promise<void> {
    await this.#sql`SELECT 1`;
  }

  async close(): Promise<void> {
    // The pool and the change follower belong to the composition root, which closes them.
  }
}
