/**
 * Schema migrations on both engines: a database written by the previous schema is upgraded
 * without losing a row, servers starting at once migrate it once, and a database a newer nadir
 * migrated is refused rather than touched.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateApiKey } from '../../src/accounts/api-key.js';
import { POSTGRES_ACCOUNTS_MIGRATIONS } from '../../src/accounts/postgres-account-store.js';
import { SQLITE_ACCOUNTS_MIGRATIONS } from '../../src/accounts/sqlite-schema.js';
import { POSTGRES_CATALOGUE_MIGRATIONS } from '../../src/catalogue/postgres-catalogue-schema.js';
import { SqliteSurveyCatalogue } from '../../src/catalogue/sqlite-catalogue.js';
import { SQLITE_CATALOGUE_MIGRATIONS } from '../../src/catalogue/sqlite-catalogue-schema.js';
import type { Migrations } from '../../src/db/migrations.js';
import { migratePostgres, openPostgres } from '../../src/db/postgres.js';
import { migrate, openSqlite } from '../../src/db/sqlite.js';
import { isNadirError } from '../../src/errors.js';
import { openStores, type Stores } from '../../src/stores/open-stores.js';
import { survey } from '../catalogue/helpers.js';
import { testClock } from '../support/clock.js';
import { type PostgresServer, SKIP_POSTGRES, startPostgres } from '../support/servers.js';

/** The schema as the previous release left it: every step but the ones this release added. */
const previous = (migrations: Migrations, steps: number): Migrations => ({
  module: migrations.module,
  steps: migrations.steps.slice(0, steps),
});

/** What the previous schema held, written with its own tables' columns. */
const ACCOUNT = { id: '11111111-1111-4111-8111-111111111111', name: 'Acme', created: '2026-10-01T00:00:00.000Z' };
const KEY = generateApiKey();
const SURVEY = survey('survey-before-upgrade', { tags: ['disaster:flood'] });

async function assertEverythingKept(stores: Stores): Promise<void> {
  assert.equal((await stores.accounts.getAccount(ACCOUNT.id))?.monthlyAllowance, 12);
  assert.equal((await stores.accounts.lookupApiKey(KEY.key))?.account.id, ACCOUNT.id, 'the key still works');
  assert.deepEqual((await stores.accounts.usage(ACCOUNT.id)).months, [
    { month: '2026-10', transactions: 3, tiles: 4500 },
  ]);
  assert.equal(await stores.accounts.isTokenBilled('token-billed-before'), true);
  assert.deepEqual(await stores.catalogue.get(SURVEY.id), SURVEY);
  assert.equal(await stores.catalogue.reserveVersion(SURVEY.id), 2);
  // And the new schema's parts work on the old rows: a revocation moves the key cache's marker.
  await stores.accounts.revokeApiKey(KEY.keyId);
  assert.equal(await stores.accounts.lookupApiKey(KEY.key), undefined);
}

function assertRefusedAsNewer(error: unknown): boolean {
  assert.ok(isNadirError(error), String(error));
  assert.equal(error.code, 'INVALID_CONFIG');
  assert.match(error.message, /newer than this nadir/);
  return true;
}

describe('SQLite migrations', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nadir-migrate-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('upgrades a file written by the previous schema without losing a row', async () => {
    const path = join(dir, 'previous.sqlite');
    const db = openSqlite(path);
    // The catalogue's schema is unchanged by this release: its store writes its rows below.
    new SqliteSurveyCatalogue(db, testClock().now);
    migrate(db, previous(SQLITE_ACCOUNTS_MIGRATIONS, 1));
    db.prepare(
      `INSERT INTO accounts (id, name, raster_subscription, monthly_allowance, tile_rate_limit,
         tile_rate_interval_seconds, disabled, created_at) VALUES (?, ?, 1, 12, 3000, 60, 0, ?)`,
    ).run(ACCOUNT.id, ACCOUNT.name, ACCOUNT.created);
    db.prepare('INSERT INTO api_keys (id, account_id, key_hash, created_at) VALUES (?, ?, ?, ?)').run(
      KEY.keyId,
      ACCOUNT.id,
      KEY.hash,
      ACCOUNT.created,
    );
    db.prepare('INSERT INTO usage_months VALUES (?, ?, 3, 4500)').run(ACCOUNT.id, '2026-10');
    db.prepare('INSERT INTO billed_tokens VALUES (?, ?, ?, ?)').run(
      'token-billed-before',
      ACCOUNT.id,
      '2026-10',
      ACCOUNT.created,
    );
    await new SqliteSurveyCatalogue(db, testClock().now).put(SURVEY);
    db.close();

    const upgraded = await openStores({ engine: 'sqlite', path }, testClock().now);
    assert.deepEqual(upgraded.schema, {
      catalogue: SQLITE_CATALOGUE_MIGRATIONS.steps.length,
      accounts: SQLITE_ACCOUNTS_MIGRATIONS.steps.length,
    });
    await assertEverythingKept(upgraded);
    await upgraded.close();
  });

  it('refuses a file a newer nadir migrated, and leaves it alone', async () => {
    const path = join(dir, 'newer.sqlite');
    await (await openStores({ engine: 'sqlite', path }, testClock().now)).close();
    const db = openSqlite(path);
    db.prepare("INSERT INTO schema_migrations VALUES ('accounts', 99)").run();
    db.close();
    await assert.rejects(openStores({ engine: 'sqlite', path }, testClock().now), assertRefusedAsNewer);
  });
});

describe('PostgreSQL migrations', { skip: SKIP_POSTGRES }, () => {
  let server: PostgresServer;
  before(async () => {
    server = await startPostgres();
  });
  after(() => server?.stop());

  it('upgrades a database written by the previous schema without losing a row', async () => {
    const url = await server.createDatabase('previous');
    const pool = await openPostgres(url);
    const { sql } = pool;
    await migratePostgres(sql, [previous(POSTGRES_CATALOGUE_MIGRATIONS, 1), previous(POSTGRES_ACCOUNTS_MIGRATIONS, 1)]);
    await sql`INSERT INTO accounts (id, name, raster_subscription, monthly_allowance, tile_rate_limit,
        tile_rate_interval_seconds, disabled, created_at)
      VALUES (${ACCOUNT.id}, ${ACCOUNT.name}, true, 12, 3000, 60, false, ${ACCOUNT.created})`;
    await sql`INSERT INTO api_keys (id, account_id, key_hash, created_at)
      VALUES (${KEY.keyId}, ${ACCOUNT.id}, ${KEY.hash}, ${ACCOUNT.created})`;
    await sql`INSERT INTO usage_months VALUES (${ACCOUNT.id}, '2026-10', 3, 4500)`;
    await sql`INSERT INTO billed_tokens VALUES ('token-billed-before', ${ACCOUNT.id}, '2026-10', ${ACCOUNT.created})`;
    const { packFootprint } = await import('../../src/catalogue/packed-footprint.js');
    const { documentJson, listingJson } = await import('../../src/catalogue/survey-rows.js');
    await sql`INSERT INTO surveys (id, capture_date, last_photo_time, version, type_mask, tags, footprint, outline, listing, body)
      VALUES (${SURVEY.id}, ${SURVEY.captureDate}, ${SURVEY.lastPhotoTime}, 1, 7, ${SURVEY.tags},
        ST_Multi(ST_SetSRID(ST_GeomFromGeoJSON(${JSON.stringify({ type: 'MultiPolygon', coordinates: SURVEY.footprint })}), 4326)),
        ${Buffer.from(packFootprint(SURVEY.footprint))}, ${listingJson(SURVEY)}, ${documentJson(SURVEY)})`;
    await sql`INSERT INTO survey_versions VALUES (${SURVEY.id}, 1)`;
    await pool.end(5);

    const upgraded = await openStores({ engine: 'postgres', url }, testClock().now);
    assert.deepEqual(upgraded.schema, {
      catalogue: POSTGRES_CATALOGUE_MIGRATIONS.steps.length,
      accounts: POSTGRES_ACCOUNTS_MIGRATIONS.steps.length,
    });
    await assertEverythingKept(upgraded);
    await upgraded.close();
  });

  it('servers starting at once migrate a new database once (advisory lock)', async () => {
    const url = await server.createDatabase('together');
    const all = await Promise.all(
      Array.from({ length: 4 }, () => openStores({ engine: 'postgres', url }, testClock().now)),
    );
    const steps = await server.psql(
      'together',
      'SELECT module, count(*) FROM schema_migrations GROUP BY module ORDER BY module',
    );
    assert.equal(
      steps,
      `accounts|${POSTGRES_ACCOUNTS_MIGRATIONS.steps.length}\ncatalogue|${POSTGRES_CATALOGUE_MIGRATIONS.steps.length}`,
    );
    for (const stores of all) await stores.close();
  });

  it('refuses a database a newer nadir migrated, and leaves it alone', async () => {
    const url = await server.createDatabase('newer');
    await (await openStores({ engine: 'postgres', url }, testClock().now)).close();
    await server.psql('newer', "INSERT INTO schema_migrations VALUES ('catalogue', 99)");
    await assert.rejects(openStores({ engine: 'postgres', url }, testClock().now), assertRefusedAsNewer);
  });

  it('a server that cannot reach its database fails at start, saying where, never the password', async () => {
    const url = `postgres://nadir:hunter2@127.0.0.1:${server.port + 1}/nadir`;
    await assert.rejects(openStores({ engine: 'postgres', url }, testClock().now), (error: Error) => {
      assert.match(error.message, /Cannot reach PostgreSQL at postgres:\/\/\*\*\*@127\.0\.0\.1/);
      assert.ok(!error.message.includes('hunter2'));
      return true;
    });
  });
});
