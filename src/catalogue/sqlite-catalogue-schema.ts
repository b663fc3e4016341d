/**
 * The SQL of the catalogue's SQLite file that is not a search's: its migrations, and the
 * statements over the maintained survey groups (survey-groups.ts), which `put`, `delete`,
 * `groups`, `extents` and `count` run (sqlite-catalogue.ts).
 */
import type { Migrations } from '../db/migrations.js';
import type { GroupQuery, SurveyGroup } from './catalogue.js';
import { GROUP_COLUMNS, groupTypeValues, TAG_EXTENT_COLUMNS } from './survey-groups.js';

export const SQLITE_CATALOGUE_MIGRATIONS: Migrations = {
  module: 'catalogue',
  steps: [
    `CREATE TABLE surveys (
     id TEXT PRIMARY KEY,
     capture_date TEXT NOT NULL,
     last_photo_time TEXT NOT NULL,
     version INTEGER NOT NULL,
     type_mask INTEGER NOT NULL,
     tags TEXT NOT NULL,
     footprint TEXT NOT NULL,
     body TEXT NOT NULL
   );
   CREATE VIRTUAL TABLE survey_extent USING rtree(survey_rowid, min_x, max_x, min_y, max_y);
   CREATE TABLE survey_versions (id TEXT PRIMARY KEY, last_version INTEGER NOT NULL);`,
    // Footprints packed (packed-footprint.ts) instead of GeoJSON text, which every search parsed
    // for every candidate; the small columns a search reads come before the document. Rowids are
    // kept: the R*Tree refers to them.
    `CREATE TABLE surveys_packed (
     id TEXT PRIMARY KEY,
     capture_date TEXT NOT NULL,
     last_photo_time TEXT NOT NULL,
     version INTEGER NOT NULL,
     type_mask INTEGER NOT NULL,
     tags TEXT NOT NULL,
     outline BLOB NOT NULL,
     body TEXT NOT NULL
   );
   INSERT INTO surveys_packed (rowid, id, capture_date, last_photo_time, version, type_mask, tags, outline, body)
     SELECT rowid, id, capture_date, last_photo_time, version, type_mask, tags, nadir_pack_footprint(footprint), body
     FROM surveys;
   DROP TABLE surveys;
   ALTER TABLE surveys_packed RENAME TO surveys;`,
    // Listings (survey-rows.ts) in their own small column, before the document: a search that only
    // lists surveys (coverage) parsed every listed survey's whole document.
    `CREATE TABLE surveys_listed (
     id TEXT PRIMARY KEY,
     capture_date TEXT NOT NULL,
     last_photo_time TEXT NOT NULL,
     version INTEGER NOT NULL,
     type_mask INTEGER NOT NULL,
     tags TEXT NOT NULL,
     outline BLOB NOT NULL,
     listing TEXT NOT NULL,
     body TEXT NOT NULL
   );
   INSERT INTO surveys_listed (rowid, id, capture_date, last_photo_time, version, type_mask, tags, outline, listing, body)
     SELECT rowid, id, capture_date, last_photo_time, version, type_mask, tags, outline, nadir_listing(body), body
     FROM surveys;
   DROP TABLE surveys;
   ALTER TABLE surveys_listed RENAME TO surveys;`,
    // A count of the catalogue's own changes, whoever makes them: SQLite's data_version moves on
    // every other connection's commit to the file, usage counts included, and a tile server that
    // forgot its remembered tiles at each of those (every few seconds under --workers) kept
    // redrawing them. A migration that rebuilds `surveys` must create these triggers again.
    `CREATE TABLE catalogue_changes (id INTEGER PRIMARY KEY CHECK (id = 1), changes INTEGER NOT NULL);
   INSERT INTO catalogue_changes (id, changes) VALUES (1, 0);
   CREATE TRIGGER surveys_inserted AFTER INSERT ON surveys BEGIN UPDATE catalogue_changes SET changes = changes + 1; END;
   CREATE TRIGGER surveys_updated AFTER UPDATE ON surveys BEGIN UPDATE catalogue_changes SET changes = changes + 1; END;
   CREATE TRIGGER surveys_deleted AFTER DELETE ON surveys BEGIN UPDATE catalogue_changes SET changes = changes + 1; END;`,
    // Survey files in object storage are removed after a grace period, not at once: when a
    // version was replaced (retired_files) and when an ingest began (reserved_at) say which.
    `ALTER TABLE survey_versions ADD COLUMN reserved_at TEXT;
     CREATE TABLE retired_files (location TEXT PRIMARY KEY, retired_at TEXT NOT NULL);`,
    // Keyset paging walks this index in order (STAC pages deep in 100,000 surveys); layer and
    // collection extents read the maintained groups (survey-groups.ts), built here for the
    // surveys already there.
    `CREATE INDEX surveys_newest ON surveys (capture_date DESC, last_photo_time DESC, id);
     CREATE TABLE survey_groups (
       content_type TEXT NOT NULL,
       tag TEXT NOT NULL,
       capture_date TEXT NOT NULL,
       surveys INTEGER NOT NULL,
       min_x REAL NOT NULL,
       min_y REAL NOT NULL,
       max_x REAL NOT NULL,
       max_y REAL NOT NULL,
       first_photo_time TEXT NOT NULL,
       last_photo_time TEXT NOT NULL,
       min_zoom INTEGER NOT NULL,
       max_zoom INTEGER NOT NULL,
       PRIMARY KEY (content_type, tag, capture_date)
     ) WITHOUT ROWID;
     ${sqliteGroupsInsert('TRUE')}`,
  ],
};

/**
 * Computes the groups of the surveys `where` selects (alias `s`), every content type and tag of
 * each (`''` for any), from the rows themselves: the packed footprint's exact box (the R*Tree's is
 * rounded to float32), the listing's first photo, the document's zooms. A migration step runs
 * it over every survey; `put` and `delete` over the dates they touched. A survey listing a tag twice counts once.
 */
export function sqliteGroupsInsert(where: string): string {
  return `WITH types(name, bit) AS (VALUES ${groupTypeValues()})
    INSERT INTO survey_groups (${GROUP_COLUMNS})
    SELECT t.name, g.value, s.capture_date, count(DISTINCT s.rowid),
      min(nadir_outline_bound(s.outline, 0)), min(nadir_outline_bound(s.outline, 1)),
      max(nadir_outline_bound(s.outline, 2)), max(nadir_outline_bound(s.outline, 3)),
      min(json_extract(s.listing, '$.firstPhotoTime')), max(s.last_photo_time),
      coalesce(min(CASE WHEN t.bit = 0 THEN 0 ELSE json_extract(s.body, '$.assets.' || t.name || '.minZoom') END), 0),
      coalesce(max(CASE WHEN t.bit = 0 THEN 0 ELSE json_extract(s.listing, '$.assets.' || t.name || '.maxZoom') END), 0)
    FROM surveys s
    JOIN types t ON t.bit = 0 OR (s.type_mask & t.bit) != 0
    JOIN json_each(json_insert(s.tags, '$[#]', '')) g
    WHERE ${where}
    GROUP BY t.name, g.value, s.capture_date`;
}

/** The groups a GroupQuery selects, as rows (`groups`) or merged per tag (`extents`). */
export function groupsSql(tags: 'none' | 'all' | 'patterns', merged = false): string {
  const tagTest =
    tags === 'none'
      ? `tag = ''`
      : tags === 'all'
        ? 'TRUE'
        : `tag != '' AND EXISTS (SELECT 1 FROM json_each(@patterns) p
            WHERE tag = p.value OR (instr(p.value, ':') = 0 AND substr(tag, 1, length(p.value) + 1) = p.value || ':'))`;
  const where = `WHERE content_type = @type AND capture_date >= @since AND capture_date <= @until AND ${tagTest}`;
  if (merged) {
    // Dates in no order (ordering them here cost more than the rest of the query): see extents.
    return `SELECT ${TAG_EXTENT_COLUMNS}, group_concat(capture_date, ',') AS dates
      FROM survey_groups ${where} GROUP BY tag ORDER BY tag`;
  }
  return `SELECT ${GROUP_COLUMNS} FROM survey_groups ${where} ORDER BY capture_date DESC, tag`;
}

export function groupParameters(query: GroupQuery) {
  return {
    type: query.type ?? '',
    since: query.since ?? '0000-00-00',
    until: query.until ?? '9999-99-99',
    ...(typeof query.tags === 'string' ? {} : { patterns: JSON.stringify(query.tags) }),
  };
}

/** A new survey's group as addToGroup's parameters. */
export function groupParams(group: SurveyGroup) {
  const { minX, minY, maxX, maxY } = group.bounds;
  return {
    type: group.type,
    tag: group.tag,
    date: group.captureDate,
    minX,
    minY,
    maxX,
    maxY,
    first: group.firstPhotoTime,
    last: group.lastPhotoTime,
    minZoom: group.minZoom,
    maxZoom: group.maxZoom,
  };
}
