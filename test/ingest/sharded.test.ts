/**
 * A delivery of several files in two CRSs, ingested as shard COGs (docs/ingest.md, "Shards") by
 * worker processes, then read back by every reader: the stored shards checked with GDAL, the
 * mosaic against gdalwarp of the original raster, map tiles across shard borders and from the low
 * COG, an AOI raster across shard borders, DSM heights, resume after a failure, and gc.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Asset, Survey } from '../../src/catalogue/survey.js';
import { aoiLonLatBounds } from '../../src/geo/aoi.js';
import { assetFiles } from '../../src/geo/asset-layout.js';
import { mercatorToLonLat, resolutionAtZoom, type TileCoord, tileBounds } from '../../src/geo/web-mercator.js';
import type { IngestJob, IngestJobResult } from '../../src/ingest/ingest-jobs.js';
import { SurveyIngestor } from '../../src/ingest/ingest-survey.js';
import { InProcessRunner, WorkerPool } from '../../src/ingest/worker-pool.js';
import { IngestWorkspace } from '../../src/ingest/workspace.js';
import { collectGarbage } from '../../src/storage/garbage.js';
import { type ApiFixture, createKey, realdataMissing, startApi } from '../api/helpers.js';
import { assetPath, gdalinfo, REALDATA, run, writeManifest } from '../support/fixtures.js';
import { type Raster, readRaster } from '../support/pixels.js';
import { comparePixels, gdalwarpReference } from '../support/reference.js';

const ORTHO = join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif');
const DSM = join(REALDATA, 'fieldimager-ws5/dsm.tif');
const SHARDED_ID = '5a4d0000-0000-4000-8000-000000000001';
const SINGLE_ID = '5a4d0000-0000-4000-8000-000000000002';

/** Cuts `source` into `cols` x `rows` files; those in `reproject` go to UTM 15N (with alpha). */
async function cut(source: string, dir: string, cols: number, rows: number, reproject: number[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  const info = await gdalinfo(source);
  const [width, height] = info.size;
  const w = Math.ceil(width / cols);
  const h = Math.ceil(height / rows);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const index = r * cols + c;
      const piece = join(dir, `piece_${index}.tif`);
      const window = [
        String(c * w),
        String(r * h),
        String(Math.min(w, width - c * w)),
        String(Math.min(h, height - r * h)),
      ];
      if (!reproject.includes(index)) {
        await run('gdal_translate', ['-q', '-srcwin', ...window, source, piece]);
        continue;
      }
      const utm16 = join(dir, `utm16_${index}.tif`);
      await run('gdal_translate', ['-q', '-srcwin', ...window, source, utm16]);
      // Another zone, another grid: the warp leaves a no-data collar, marked here by alpha (RGB)
      // or by the source's nodata (DSM).
      const args = ['-q', '-t_srs', 'EPSG:32615', '-r', 'bilinear'];
      if (info.bands.length >= 3) args.push('-dstalpha');
      await run('gdalwarp', [...args, utm16, piece]);
      await run('rm', [utm16]);
    }
  }
}

/**
 * The mean difference of every channel where both have data, in DN. Issue 31 asks for 2 against
 * GDAL's own mosaic + warp, a lossless reference here: over the whole mosaic JPEG storage at
 * quality 95 (the default, geo/asset-layout.ts) measured 1.90 DN, at 90 2.37.
 */
function assertMeanWithin(ours: Raster, theirs: Raster, dn: number, what: string): void {
  let sum = 0;
  let count = 0;
  ours.mask.forEach((valid, i) => {
    if (!valid || !theirs.mask[i]) return;
    ours.bands.forEach((band, k) => {
      sum += Math.abs((band[i] as number) - (theirs.bands[k]?.[i] as number));
      count++;
    });
  });
  assert.ok(count > 0, `${what}: no pixel to compare`);
  assert.ok(sum / count <= dn, `${what}: mean difference ${(sum / count).toFixed(2)} DN`);
}

function tileAt(x: number, y: number, z: number): TileCoord {
  const size = tileBounds({ z, x: 0, y: 0 }).maxX - tileBounds({ z, x: 0, y: 0 }).minX;
  const origin = -tileBounds({ z: 0, x: 0, y: 0 }).minX;
  return { z, x: Math.floor((x + origin) / size), y: Math.floor((origin - y) / size) };
}

/** Counts the jobs that ran, and fails the one numbered `failAt` (a crash in the middle). */
class CountingRunner extends InProcessRunner {
  ran = 0;
  constructor(readonly failAt = Number.POSITIVE_INFINITY) {
    super();
  }
  override async run(jobs: readonly IngestJob[], progress: (index: number, fraction: number) => void) {
    const results: IngestJobResult[] = [];
    for (const [index, job] of jobs.entries()) {
      if (this.ran++ === this.failAt) throw new Error('the machine went away');
      results.push(...(await super.run([job], (_, f) => progress(index, f))));
    }
    return results;
  }
}

describe('a multi-file, two-CRS delivery as shard COGs', { skip: realdataMissing }, () => {
  let api: ApiFixture;
  let key: string;
  let sharded: Survey;
  let single: Survey;
  let ingestor: SurveyIngestor;
  let manifest: string;

  before(async () => {
    api = await startApi();
    key = (await createKey(api.services, 'sharded')).key;
    const delivery = join(api.dir, 'delivery');
    await cut(ORTHO, join(delivery, 'ortho'), 2, 2, [2, 3]);
    await cut(DSM, join(delivery, 'dsm'), 2, 1, [1]);
    // One level a shard: 512 px shards, so this 0.2 m raster spans several of them.
    const { catalogue, storage } = api.services;
    ingestor = new SurveyIngestor({
      catalogue,
      storage,
      clock: () => new Date('2026-01-01T00:00:00Z'),
      workspace: new IngestWorkspace(api.dir),
      shardLevels: 1,
    });
    manifest = await writeManifest(delivery, 'sharded', {
      id: SHARDED_ID,
      captureDate: '2021-07-02',
      assets: { Vert: 'ortho/*.tif', DetailDsm: ['dsm/piece_0.tif', 'dsm/piece_1.tif'] },
    });
    const pool = new WorkerPool(2, 2);
    try {
      sharded = await ingestor.ingestManifestFile(manifest, undefined, { runner: pool });
    } finally {
      await pool.close();
    }
    single = await api.services.ingestor.ingest({
      id: SINGLE_ID,
      captureDate: '2021-07-02',
      firstPhotoTime: '2021-07-02T00:00:00Z',
      lastPhotoTime: '2021-07-02T23:59:59Z',
      tags: [],
      assets: { Vert: ORTHO },
    });
  });
  after(async () => api?.close());

  test('each asset is stored as shards of one map tile each, plus a low COG', async () => {
    for (const type of ['Vert', 'DetailDsm'] as const) {
      const asset = sharded.assets[type] as Asset;
      assert.ok(asset.shards, `${type} is sharded`);
      const { shards } = asset;
      assert.equal(shards.zoom, asset.maxZoom - 1);
      assert.ok(shards.tiles.length / 2 >= 2, `${type} spans ${shards.tiles.length / 2} shards`);
      for (const file of assetFiles(asset).slice(1)) {
        const info = await gdalinfo(assetPath(api.services, { uri: file }));
        assert.deepEqual(info.size, [512, 512], file);
        assert.match(info.coordinateSystem?.wkt ?? '', /Pseudo-Mercator/);
        assert.ok(Math.abs((info.geoTransform[1] as number) - resolutionAtZoom(asset.maxZoom)) < 1e-9);
        assert.equal(info.bands[0]?.overviews?.length, 1, `${file} holds its shard zoom as an overview`);
      }
      const low = await gdalinfo(assetPath(api.services, { uri: shards.low.uri }));
      assert.ok(Math.abs((low.geoTransform[1] as number) - resolutionAtZoom(shards.zoom - 1)) < 1e-9);
    }
    // The single-file survey is not padded into shards: one COG, as before.
    assert.equal(single.assets.Vert?.shards, undefined);
  });

  test("the shards together equal GDAL's own mosaic and warp of the same files", async () => {
    for (const [type, pattern] of [
      ['Vert', 'ortho'],
      ['DetailDsm', 'dsm'],
    ] as const) {
      const asset = sharded.assets[type] as Asset;
      const mosaic = join(api.dir, `${type}-mosaic.tif`);
      const files = assetFiles(asset)
        .slice(1)
        .map((uri) => assetPath(api.services, { uri }));
      const b = asset.bounds;
      await run('gdalwarp', [
        ...['-q', '-overwrite', '-te', `${b.minX}`, `${b.minY}`, `${b.maxX}`, `${b.maxY}`],
        ...['-ts', `${asset.width}`, `${asset.height}`, '-r', 'near'],
        ...(asset.kind === 'rgb' ? ['-dstalpha'] : ['-dstnodata', '-9999']),
        ...files,
        mosaic,
      ]);
      const ref = join(api.dir, `${type}-ref.tif`);
      const pieces = [0, 1, 2, 3].map((i) => join(api.dir, 'delivery', pattern, `piece_${i}.tif`));
      await gdalwarpReference(type === 'Vert' ? pieces : pieces.slice(0, 2), asset, ref);
      const bands = asset.kind === 'rgb' ? [1, 2, 3] : [1];
      const [ours, theirs] = [await readRaster(mosaic, bands), await readRaster(ref, bands)];
      if (asset.kind === 'rgb') {
        comparePixels(ours, theirs, 'rgb', 0.01);
        assertMeanWithin(ours, theirs, 2, `${type} mosaic`);
      } else {
        const differences: number[] = [];
        ours.bands[0]?.forEach((height, i) => {
          if (ours.mask[i] && theirs.mask[i]) differences.push(Math.abs(height - (theirs.bands[0]?.[i] as number)));
        });
        differences.sort((a, c) => a - c);
        assert.ok(differences.length > 0.5 * ours.mask.length * 0.3, `${differences.length} heights compared`);
        const median = differences[Math.floor(differences.length / 2)] as number;
        assert.ok(median <= 0.05, `median height difference ${median} m`);
      }
    }
  });

  test("map tiles beside shard borders and from the low COG equal GDAL's warp of the same files", async () => {
    const asset = sharded.assets.Vert as Asset;
    const shards = asset.shards;
    assert.ok(shards);
    const pieces = [0, 1, 2, 3].map((i) => join(api.dir, 'delivery', 'ortho', `piece_${i}.tif`));
    // The shard corner nearest the survey's centre: the four tiles around it lie in four shards.
    const span = tileBounds({ z: shards.zoom, x: 0, y: 0 }).maxX - tileBounds({ z: shards.zoom, x: 0, y: 0 }).minX;
    const origin = -tileBounds({ z: 0, x: 0, y: 0 }).minX;
    const centre = { x: (asset.bounds.minX + asset.bounds.maxX) / 2, y: (asset.bounds.minY + asset.bounds.maxY) / 2 };
    const corner = {
      x: Math.round((centre.x + origin) / span) * span - origin,
      y: origin - Math.round((origin - centre.y) / span) * span,
    };
    const step = resolutionAtZoom(asset.maxZoom);
    const tiles: Array<[TileCoord, string]> = [];
    for (const [dx, dy] of [
      [-1, 1],
      [1, 1],
      [-1, -1],
      [1, -1],
    ] as const) {
      tiles.push([tileAt(corner.x + dx * step, corner.y + dy * step, asset.maxZoom), 'bilinear']);
    }
    // Below the shard zoom: the low COG, one tile over every shard.
    tiles.push([tileAt(centre.x, centre.y, shards.zoom - 1), 'average']);
    let drawn = 0;
    for (const [tile, resampling] of tiles) {
      const { z, x, y } = tile;
      const r = await api.get(`/tiles/v3/surveys/${SHARDED_ID}/Vert/${z}/${x}/${y}.png?apikey=${key}`);
      if (r.status === 404) continue; // a corner tile outside the data
      assert.equal(r.status, 200, `z${z}`);
      drawn++;
      const ours = join(api.dir, `tile-${z}-${x}-${y}.png`);
      await writeFile(ours, Buffer.from(await r.arrayBuffer()));
      const b = tileBounds(tile);
      const ref = join(api.dir, `tile-${z}-${x}-${y}-ref.tif`);
      await run('gdalwarp', [
        ...['-q', '-overwrite', '-t_srs', 'EPSG:3857', '-te', `${b.minX}`, `${b.minY}`, `${b.maxX}`, `${b.maxY}`],
        ...['-ts', '256', '256', '-r', resampling, '-ot', 'Byte', '-dstalpha', ...pieces, ref],
      ]);
      // A one-pixel rim of the data decided differently is a few percent of a corner tile's data.
      const [mine, gdals] = [await readRaster(ours, [1, 2, 3]), await readRaster(ref, [1, 2, 3])];
      comparePixels(mine, gdals, 'rgb', 0.03);
      // Single tiles vary with their texture around the mosaic's 1.90 DN: 1.50-2.55 measured at
      // quality 95, the same 2.45 well inside a tile as over all of it (it is the JPEG, not a
      // seam); the low COG's tile over four shards (two JPEG generations) 2.43.
      assertMeanWithin(mine, gdals, 3, `tile ${z}/${x}/${y}`);
    }
    assert.ok(drawn >= 3, `${drawn} tiles drawn`);
  });

  test('an AOI raster across shard borders matches the single-COG survey', async () => {
    const asset = sharded.assets.Vert as Asset;
    const [lon, lat] = mercatorToLonLat(
      (asset.bounds.minX + asset.bounds.maxX) / 2,
      (asset.bounds.minY + asset.bounds.maxY) / 2,
    );
    const aoi = { lon, lat, radius: 40 };
    assert.ok(aoiLonLatBounds(aoi));
    const paths: string[] = [];
    for (const survey of [sharded, single]) {
      const result = await api.services.raster.renderAoi({
        asset: survey.assets.Vert as Asset,
        aoi,
        size: 400,
        format: 'tif',
      });
      const path = join(api.dir, `aoi-${survey.id}.tif`);
      await writeFile(path, result.body);
      paths.push(path);
    }
    const [ours, theirs] = await Promise.all(paths.map((path) => readRaster(path, [1, 2, 3])));
    comparePixels(ours as never, theirs as never, 'rgb', 0.02);
  });

  test('a re-run after a failure resumes: finished jobs are not done again', async () => {
    const clean = new CountingRunner();
    await ingestor.ingestManifestFile(manifest, undefined, { runner: clean });
    const all = clean.ran;
    const failing = new CountingRunner(Math.floor(all / 2));
    await assert.rejects(ingestor.ingestManifestFile(manifest, undefined, { runner: failing }), /went away/);
    assert.equal((await api.services.catalogue.get(SHARDED_ID))?.version, 2, 'nothing of the failed run is visible');
    const resumed = new CountingRunner();
    const survey = await ingestor.ingestManifestFile(manifest, undefined, { runner: resumed });
    assert.equal(survey.version, 3);
    assert.equal(resumed.ran, all - Math.floor(all / 2), 'only the jobs the failed run did not finish');
    sharded = survey;
  });

  test('garbage collection keeps every shard of a live survey', async () => {
    const report = await collectGarbage(api.services.storage, api.services.catalogue, {
      now: new Date('2027-01-01T00:00:00Z'),
    });
    const live = new Set(Object.values(sharded.assets).flatMap((a) => (a ? assetFiles(a) : [])));
    assert.ok(live.size > 4);
    for (const key of report.deleted) assert.ok(!live.has(key), `${key} deleted`);
    for (const key of live) {
      const info = await gdalinfo(assetPath(api.services, { uri: key }));
      assert.ok(info.size[0] > 0);
    }
    assert.ok(
      report.deleted.some((key) => key.includes('/v1/Vert/')),
      'the replaced version went',
    );
  });
});
