/**
 * The coverage benchmark's synthetic catalogue (bench/coverage/catalogue.ts: the same generator,
 * seed and surveys as the SQLite files) loaded into PostgreSQL after `nadir migrate`, so both
 * engines answer the same points over the same surveys. Rows are built as PostgresSurveyCatalogue
 * builds them, but sent a few thousand per statement: its one-survey-per-transaction `put` would
 * take hours for millions. Any other generator's surveys load the same way (loadPostgresSurveys).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { packFootprint } from '../../src/catalogue/packed-footprint.js';
import { postgresGroupsInsert } from '../../src/catalogue/postgres-catalogue-schema.js';
import { CONTENT_TYPES, type Survey } from '../../src/catalogue/survey.js';
import { documentJson, listingJson, typeMask } from '../../src/catalogue/survey-rows.js';
import { generate, layoutFor, type SyntheticCatalogue } from '../coverage/catalogue.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const BATCH = 5000;

export interface LoadedCatalogue {
  layout: SyntheticCatalogue;
  seconds: number;
}

/** `nadir migrate` on `url`, then `count` surveys, then VACUUM and ANALYZE. `dataDir`: any scratch folder. */
export async function loadPostgresCatalogue(
  url: string,
  dataDir: string,
  count: number,
  log: (line: string) => void,
): Promise<LoadedCatalogue> {
  const started = performance.now();
  const layout = layoutFor(count);
  await loadPostgresSurveys(url, dataDir, generate(layout), count, log);
  return { layout, seconds: (performance.now() - started) / 1000 };
}

/**
 * `nadir migrate` on `url`, then the surveys, then their groups (the catalogue's maintained
 * aggregates, which `put` keeps and this bulk load must build: postgresGroupsInsert), then VACUUM
 * and ANALYZE.
 */
export async function loadPostgresSurveys(
  url: string,
  dataDir: string,
  surveys: Iterable<Survey>,
  count: number,
  log: (line: string) => void,
): Promise<void> {
  const env = { ...process.env, NADIR_DATA_DIR: dataDir, NADIR_DATABASE: url, NADIR_LOG_LEVEL: 'warn' };
  await run(process.execPath, [join(ROOT, 'bin/nadir'), 'migrate'], { env });
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    let batch: Record<string, unknown>[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      // jsonb_to_recordset turns one JSON array into rows, JSON arrays into text[] included.
      await sql`
        INSERT INTO surveys (id, capture_date, last_photo_time, version, type_mask, tags, footprint, outline, listing, body)
        SELECT id, capture_date, last_photo_time, version, type_mask, tags,
          ST_Multi(ST_SetSRID(ST_GeomFromGeoJSON(geometry), 4326)), decode(outline, 'base64'), listing, body
        FROM jsonb_to_recordset(${sql.json(batch as postgres.JSONValue)}) AS r(id text, capture_date text,
          last_photo_time text, version integer, type_mask integer, tags text[], geometry text, outline text,
          listing text, body text)`;
      batch = [];
    };
    let done = 0;
    for (const survey of surveys) {
      batch.push({
        id: survey.id,
        capture_date: survey.captureDate,
        last_photo_time: survey.lastPhotoTime,
        version: survey.version,
        type_mask: typeMask(CONTENT_TYPES.filter((type) => survey.assets[type])),
        tags: survey.tags,
        geometry: JSON.stringify({ type: 'MultiPolygon', coordinates: survey.footprint }),
        outline: Buffer.from(packFootprint(survey.footprint)).toString('base64'),
        listing: listingJson(survey),
        body: documentJson(survey),
      });
      if (batch.length === BATCH) {
        await flush();
        done += BATCH;
        if (done % 200_000 === 0) log(`postgres: ${done} of ${count} surveys loaded`);
      }
    }
    await flush();
    await sql`DELETE FROM survey_groups`;
    await sql.unsafe(postgresGroupsInsert('TRUE'));
    // VACUUM as well, as after any bulk load: otherwise autovacuum takes the new table in the
    // minutes after (PostgreSQL vacuums after inserts too), and every first read of a row sets
    // its hint bits, dirtying its page. Then a CHECKPOINT: the load's pages are written now, not
    // by the checkpointer during the measured searches (whose CPU counts PostgreSQL's processes).
    await sql`VACUUM (ANALYZE) surveys`;
    await sql`VACUUM (ANALYZE) survey_groups`;
    await sql`CHECKPOINT`;
  } finally {
    await sql.end();
  }
}
