import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteSurveyCatalogue } from '../../src/catalogue/sqlite-catalogue.js';
import { openSqlite } from '../../src/db/sqlite.js';
import { testClock } from '../support/clock.js';
import { box, everything, lFootprint, rectFootprint, survey } from './helpers.js';

const ids = (page: { surveys: { id: string }[] }) => page.surveys.map((s) => s.id);

describe('SqliteSurveyCatalogue in a file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nadir-catalogue-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('survives reopening: surveys, the index and version counters persist; migrations run once', async () => {
    const path = join(dir, 'sub', 'nadir.sqlite');
    const first = new SqliteSurveyCatalogue(openSqlite(path), testClock().now);
    await first.put(survey('s1', { footprint: rectFootprint(box(1, 1, 2, 2)) }));
    assert.equal(await first.reserveVersion('s1'), 2);
    await first.close();

    const db = openSqlite(path);
    const second = new SqliteSurveyCatalogue(db, testClock().now);
    assert.deepEqual(await second.get('s1'), survey('s1', { footprint: rectFootprint(box(1, 1, 2, 2)) }));
    assert.deepEqual(ids(await second.search({ ...everything, area: box(1.4, 1.4, 1.6, 1.6) })), ['s1']);
    assert.equal(await second.reserveVersion('s1'), 3);
    const migrations = db.prepare("SELECT version FROM schema_migrations WHERE module = 'catalogue'").all();
    assert.deepEqual(
      migrations,
      [1, 2, 3, 4, 5, 6].map((version) => ({ version })),
    );
    await second.close();
  });

  it('migrates a file written with GeoJSON footprint text (schema 1): packed footprints, listings', async () => {
    const path = join(dir, 'schema1.sqlite');
    const db = openSqlite(path);
    // Schema 1 and its rows exactly as the catalogue wrote them before migration 2.
    db.exec(`CREATE TABLE schema_migrations (module TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (module, version));
      INSERT INTO schema_migrations VALUES ('catalogue', 1);
      CREATE TABLE surveys (id TEXT PRIMARY KEY, capture_date TEXT NOT NULL, last_photo_time TEXT NOT NULL,
        version INTEGER NOT NULL, type_mask INTEGER NOT NULL, tags TEXT NOT NULL, footprint TEXT NOT NULL, body TEXT NOT NULL);
      CREATE VIRTUAL TABLE survey_extent USING rtree(survey_rowid, min_x, max_x, min_y, max_y);
      CREATE TABLE survey_versions (id TEXT PRIMARY KEY, last_version INTEGER NOT NULL);`);
    const old = [
      survey('a', { footprint: lFootprint(box(10, 44, 10.02, 44.02)), tags: ['disaster:fire'] }),
      survey('b', { footprint: rectFootprint(box(10.03, 44, 10.04, 44.01)), captureDate: '2023-01-01' }),
    ];
    const insert = db.prepare('INSERT INTO surveys VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const extent = db.prepare('INSERT INTO survey_extent VALUES (?, ?, ?, ?, ?)');
    for (const s of old) {
      const row = insert.run(
        s.id,
        s.captureDate,
        s.lastPhotoTime,
        s.version,
        7,
        JSON.stringify(s.tags),
        JSON.stringify(s.footprint),
        JSON.stringify({ ...s, footprint: undefined }),
      );
      const b =
        s.footprint[0]?.[0]?.reduce(
          (acc, [x, y]) =>
            box(Math.min(acc.minX, x), Math.min(acc.minY, y), Math.max(acc.maxX, x), Math.max(acc.maxY, y)),
          box(180, 90, -180, -90),
        ) ?? box(0, 0, 0, 0);
      extent.run(row.lastInsertRowid, b.minX, b.maxX, b.minY, b.maxY);
    }
    db.close();

    const catalogue = new SqliteSurveyCatalogue(openSqlite(path), testClock().now);
    assert.deepEqual(await catalogue.get('a'), old[0]);
    assert.deepEqual(await catalogue.get('b'), old[1]);
    // The L's notch is outside its footprint: the exact test reads the converted footprint.
    assert.deepEqual(ids(await catalogue.search({ ...everything, area: box(10.018, 44.018, 10.019, 44.019) })), []);
    assert.deepEqual(ids(await catalogue.search({ ...everything, area: box(10.001, 44.001, 10.035, 44.002) })), [
      'a',
      'b',
    ]);
    // The groups of surveys written before them are built by the migration that made them.
    assert.equal(await catalogue.count(), 2);
    const extents = await catalogue.extents({ type: 'Vert', tags: 'all' });
    assert.deepEqual(
      extents.map((x) => [x.tag, x.surveys, x.captureDates]),
      [
        ['', 2, ['2024-06-01', '2023-01-01']],
        ['disaster:fire', 1, ['2024-06-01']],
      ],
    );
    assert.deepEqual(extents[0]?.bounds, box(10, 44, 10.04, 44.02));
    assert.deepEqual([extents[0]?.minZoom, extents[0]?.maxZoom], [15, 21]);
    const listed = await catalogue.search({ ...everything, view: 'listing' });
    assert.deepEqual(listed.surveys[0], {
      id: 'a',
      captureDate: '2024-06-01',
      firstPhotoTime: '2024-06-01T09:00:00Z',
      lastPhotoTime: '2024-06-01T12:00:00Z',
      tags: ['disaster:fire'],
      version: 1,
      assets: {
        Vert: { gsd: 0.075, maxZoom: 21 },
        TrueOrtho: { gsd: 0.075, maxZoom: 21 },
        DetailDsm: { gsd: 0.15, maxZoom: 21 },
      },
    });
    await catalogue.close();
  });

  it('two catalogues on one file see each other and share version counters', async () => {
    const path = join(dir, 'shared.sqlite');
    const a = new SqliteSurveyCatalogue(openSqlite(path), testClock().now);
    const b = new SqliteSurveyCatalogue(openSqlite(path), testClock().now);
    assert.equal(await a.reserveVersion('x'), 1);
    assert.equal(await b.reserveVersion('x'), 2);
    assert.equal(await a.reserveVersion('x'), 3);
    await a.put(survey('x', { version: 3 }));
    assert.equal((await b.get('x'))?.version, 3);
    await a.close();
    await b.close();
  });
});

describe('SqliteSurveyCatalogue change marker', () => {
  it('moves when another connection changes surveys, not when it writes other tables', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nadir-marker-'));
    try {
      const path = join(dir, 'nadir.sqlite');
      const server = new SqliteSurveyCatalogue(openSqlite(path), testClock().now);
      const ingest = new SqliteSurveyCatalogue(openSqlite(path), testClock().now);
      const other = openSqlite(path);
      other.exec('CREATE TABLE unrelated (n INTEGER)');
      const start = server.changeMarker();
      other.prepare('INSERT INTO unrelated (n) VALUES (1)').run();
      assert.equal(server.changeMarker(), start, 'a commit to another table');
      await ingest.put(survey('s1'));
      const afterPut = server.changeMarker();
      assert.notEqual(afterPut, start, 'a survey put by another connection');
      assert.equal(await server.changeMarker(), afterPut);
      other.prepare('INSERT INTO unrelated (n) VALUES (2)').run();
      assert.equal(server.changeMarker(), afterPut);
      await ingest.put(survey('s1', { version: 2 }));
      const afterReplace = server.changeMarker();
      assert.notEqual(afterReplace, afterPut, 'a survey replaced');
      await ingest.delete('s1');
      assert.notEqual(server.changeMarker(), afterReplace, 'a survey deleted');
      const own = server.changeMarker();
      await server.put(survey('s2'));
      assert.notEqual(server.changeMarker(), own, 'its own put');
      other.close();
      await ingest.close();
      await server.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
