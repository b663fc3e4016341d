/**
 * The catalogue's PostgreSQL/PostGIS schema (postgres-catalogue.ts): its migrations, and the SQL
 * that computes the maintained survey groups (survey-groups.ts) from the surveys, which a
 * migration, `put`, `delete` and bulk loaders run.
 */
import type { Migrations } from '../db/migrations.js';
import { changeCountSql } from '../db/postgres-change-count.js';
import { GROUP_COLUMNS, groupTypeValues } from './survey-groups.js';

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
    changeCountSql('catalogue_changes', 'nadir_catalogue', { surveys: ['INSERT', 'UPDATE', 'DELETE'] }),
    // Survey files in object storage are removed after a grace period, not at once: when a
    // version was replaced (retired_files) and when an ingest began (reserved_at) say which.
    `ALTER TABLE survey_versions ADD COLUMN reserved_at text;
     CREATE TABLE retired_files (location text COLLATE "C" PRIMARY KEY, retired_at text NOT NULL);`,
    // Keyset paging walks this index in order (STAC pages deep in 100,000 surveys); layer and
    // collection extents read the maintained groups (survey-groups.ts), built here for the
    // surveys already there.
    `CREATE INDEX surveys_newest ON surveys (capture_date DESC, last_photo_time DESC, id);
     CREATE TABLE survey_groups (
       content_type text COLLATE "C" NOT NULL,
       tag text COLLATE "C" NOT NULL,
       capture_date text COLLATE "C" NOT NULL,
       surveys integer NOT NULL,
       min_x double precision NOT NULL,
       min_y double precision NOT NULL,
       max_x double precision NOT NULL,
       max_y double precision NOT NULL,
       first_photo_time text COLLATE "C" NOT NULL,
       last_photo_time text COLLATE "C" NOT NULL,
       min_zoom integer NOT NULL,
       max_zoom integer NOT NULL,
       PRIMARY KEY (content_type, tag, capture_date)
     );
     ${postgresGroupsInsert('TRUE')}`,
    // A coverage search (a listing, no date, no tag) as a function that keeps one plan: the
    // statement's own plan was made again at every execution (PostgreSQL keeps custom plans
    // when a generic one is estimated dearer, as it is for \`&&\` with an unknown box), and
    // planning was 0.33 ms of its 0.47 ms (EXPLAIN ANALYZE at 1M surveys). The one plan is the
    // GiST scan every such search uses. Dates and tags are left to the statement
    // (postgres-catalogue.ts), whose plan may rightly turn on their values.
    `CREATE FUNCTION nadir_listing_candidates(min_x float8, min_y float8, max_x float8, max_y float8, mask integer, match_all boolean)
       RETURNS TABLE (id text, "captureDate" text, "lastPhotoTime" text, outline bytea, version integer, tags text[], listing text)
       LANGUAGE plpgsql STABLE
       SET plan_cache_mode = force_generic_plan
     AS $$
     BEGIN
       RETURN QUERY SELECT s.id, s.capture_date, s.last_photo_time, s.outline, s.version, s.tags, s.listing
         FROM surveys s
         WHERE s.footprint && ST_MakeEnvelope(min_x, min_y, max_x, max_y, 4326)
           AND (mask = 0 OR CASE WHEN match_all THEN (s.type_mask & mask) = mask ELSE (s.type_mask & mask) <> 0 END);
     END $$;`,
    // Several coverage searches in one statement (postgres-listing-batches.ts), each row tagged
    // with its search's place in the arrays: one round trip, one wake-up of the backend and one
    // executor start for the searches of a turn of the event loop. The same GiST scan, once per
    // search, in a nested loop; \`match_all\` is 1 or 0 (the client sends no boolean arrays).
    `CREATE FUNCTION nadir_listing_candidates_batch(min_x float8[], min_y float8[], max_x float8[], max_y float8[],
         mask integer[], match_all integer[])
       RETURNS TABLE (search integer, id text, "captureDate" text, "lastPhotoTime" text, outline bytea, version integer,
         tags text[], listing text)
       LANGUAGE plpgsql STABLE
       SET plan_cache_mode = force_generic_plan
     AS $$
     BEGIN
       RETURN QUERY SELECT q.n::integer, s.id, s.capture_date, s.last_photo_time, s.outline, s.version, s.tags, s.listing
         FROM unnest(min_x, min_y, max_x, max_y, mask, match_all) WITH ORDINALITY
           AS q(min_x, min_y, max_x, max_y, mask, match_all, n)
         JOIN surveys s ON s.footprint && ST_MakeEnvelope(q.min_x, q.min_y, q.max_x, q.max_y, 4326)
           AND (q.mask = 0 OR CASE WHEN q.match_all = 1 THEN (s.type_mask & q.mask) = q.mask
                                   ELSE (s.type_mask & q.mask) <> 0 END);
     END $$;`,
  ],
};

/**
 * Computes the groups of the surveys `where` selects (alias `s`), every content type and tag of
 * each (`''` for any): boxes from the geometry, the first photo from the listing, zooms from the
 * document, each parsed once per survey. A migration step runs it over every survey, `put` and
 * `delete` over the dates they touched (`$1`), bulk loaders after loading. A survey listing a tag
 * twice counts once.
 */
export function postgresGroupsInsert(where: string): string {
  return `INSERT INTO survey_groups (${GROUP_COLUMNS})
    SELECT t.name, g.tag, s.capture_date, count(DISTINCT s.id),
      min(ST_XMin(s.footprint)), min(ST_YMin(s.footprint)), max(ST_XMax(s.footprint)), max(ST_YMax(s.footprint)),
      min(j.first COLLATE "C"), max(s.last_photo_time),
      coalesce(min(CASE WHEN t.bit = 0 THEN 0 ELSE (j.body -> 'assets' -> t.name ->> 'minZoom')::int END), 0),
      coalesce(max(CASE WHEN t.bit = 0 THEN 0 ELSE (j.body -> 'assets' -> t.name ->> 'maxZoom')::int END), 0)
    FROM surveys s
    CROSS JOIN LATERAL (SELECT s.body::jsonb AS body, s.listing::jsonb ->> 'firstPhotoTime' AS first OFFSET 0) j
    JOIN (VALUES ${groupTypeValues()}) AS t(name, bit) ON t.bit = 0 OR (s.type_mask & t.bit) <> 0
    CROSS JOIN LATERAL unnest(array_append(s.tags, '')) AS g(tag)
    WHERE ${where}
    GROUP BY t.name, g.tag, s.capture_date`;
}
