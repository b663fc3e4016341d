/**
 * A JPEG COG already on the GoogleMapsCompatible grid (every level on tile boundaries, 256 x 256
 * tiles, overviews halving) keeps its compressed blocks: the stored COG's pixels are the source's
 * own, read with GDAL, not a second JPEG generation. The same raster one pixel off the grid is
 * warped as before.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import gdal from 'gdal-async';
import type { Asset, Survey } from '../../src/catalogue/survey.js';
import type { Services } from '../../src/composition.js';
import { ORIGIN_SHIFT, resolutionAtZoom } from '../../src/geo/web-mercator.js';
import {
  assetPath,
  gdalinfo,
  REALDATA,
  run,
  SKIP_REALDATA,
  servicesFor,
  tempDir,
  writeManifest,
} from '../support/fixtures.js';
import { type Raster, readRaster } from '../support/pixels.js';

const WEBODM = join(REALDATA, 'webodm/orthophoto.tif');

/** Colour bands and mask of one overview level, read with GDAL. */
async function readOverview(path: string, level: number): Promise<Raster> {
  const ds = await gdal.openAsync(path);
  try {
    const bands = [1, 2, 3].map((n) => ds.bands.get(n).overviews.get(level));
    const mask = ds.bands.get(1).getMaskBand()?.overviews.get(level);
    assert.ok(mask, 'a mask band');
    const { x: width, y: height } = mask.size;
    const values: Float64Array[] = [];
    for (const band of bands)
      values.push(await band.pixels.readAsync(0, 0, width, height, new Float64Array(width * height)));
    const bits = await mask.pixels.readAsync(0, 0, width, height, new Uint8Array(width * height));
    return { width, height, bands: values, mask: bits };
  } finally {
    ds.close();
  }
}

/** Mean absolute difference of the colour bands over pixels valid in both; and mask mismatches. */
function difference(a: Raster, b: Raster): { mean: number; maskMismatches: number; compared: number } {
  assert.equal(a.width, b.width);
  assert.equal(a.height, b.height);
  let sum = 0;
  let compared = 0;
  let maskMismatches = 0;
  for (let i = 0; i < a.mask.length; i++) {
    if ((a.mask[i] === 0) !== (b.mask[i] === 0)) maskMismatches++;
    if (a.mask[i] === 0 || b.mask[i] === 0) continue;
    for (let band = 0; band < 3; band++) sum += Math.abs((a.bands[band]?.[i] ?? 0) - (b.bands[band]?.[i] ?? 0));
    compared += 3;
  }
  return { mean: sum / Math.max(1, compared), maskMismatches, compared };
}

describe('a COG already on the map grid', { skip: SKIP_REALDATA }, () => {
  let dir: { path: string; remove: () => Promise<void> };
  let services: Services;
  let aligned: string;
  before(async () => {
    dir = await tempDir('aligned-cog');
    services = await servicesFor(join(dir.path, 'data'));
    aligned = join(dir.path, 'aligned.tif');
    // GDAL's own GoogleMapsCompatible COG: z18 (0.597 m), three levels on tile boundaries.
    await run('gdal_translate', [
      '-q',
      '-of',
      'COG',
      '-co',
      'TILING_SCHEME=GoogleMapsCompatible',
      '-co',
      'COMPRESS=JPEG',
      '-co',
      'QUALITY=85',
      '-co',
      'ALIGNED_LEVELS=3',
      '-co',
      'OVERVIEW_COUNT=2',
      WEBODM,
      aligned,
    ]);
  });
  after(async () => {
    await services.close();
    await dir.remove();
  });

  async function ingest(name: string, path: string): Promise<Asset> {
    const manifest = await writeManifest(dir.path, name, { captureDate: '2020-06-01', assets: { Vert: path } });
    const survey: Survey = await services.ingestor.ingestManifestFile(manifest);
    const asset = survey.assets.Vert;
    assert.ok(asset);
    return asset;
  }

  test('its blocks are stored as they are: the same pixels and mask, exactly', async () => {
    const asset = await ingest('aligned', aligned);
    const stored = assetPath(services, asset);
    const info = await gdalinfo(aligned);
    assert.deepEqual([asset.width, asset.height], info.size);
    assert.equal(asset.maxZoom, 18);
    assert.equal(asset.minZoom, 16);
    const source = await readRaster(aligned);
    const ours = await readRaster(stored);
    const diff = difference(ours, source);
    assert.ok(diff.compared > 100_000, `${diff.compared} values compared`);
    assert.equal(diff.maskMismatches, 0);
    assert.equal(diff.mean, 0);
    // Every level, not only full resolution: the overviews are the producer's too.
    for (const level of [0, 1]) {
      const a = await readOverview(stored, level);
      const b = await readOverview(aligned, level);
      assert.ok(a.width * a.height > 0);
      const levelDiff = difference(a, b);
      assert.equal(levelDiff.mean, 0, `overview ${level}`);
      assert.equal(levelDiff.maskMismatches, 0, `overview ${level} mask`);
    }
    assert.ok((await readFile(stored)).equals(await readFile(aligned)), 'stored byte for byte');
  });

  test('one pixel off the grid, it is warped onto the grid (and re-encoded)', async () => {
    const shifted = join(dir.path, 'shifted.tif');
    const info = await gdalinfo(aligned);
    const [x0, rx, , y0, , ry] = info.geoTransform;
    const [w, h] = info.size;
    // The same file, georeferenced one pixel further east: no longer on a tile boundary.
    await run('gdal_translate', [
      '-q',
      '-of',
      'COG',
      '-co',
      'COMPRESS=JPEG',
      '-co',
      'BLOCKSIZE=256',
      '-a_ullr',
      String(x0 + rx),
      String(y0),
      String(x0 + rx + w * rx),
      String(y0 + h * ry),
      aligned,
      shifted,
    ]);
    const asset = await ingest('shifted', shifted);
    const stored = await gdalinfo(assetPath(services, asset));
    const res = resolutionAtZoom(asset.maxZoom);
    const [ox, , , oy] = stored.geoTransform;
    // The warped COG starts on a tile boundary, the source did not.
    const tiles = (ox + ORIGIN_SHIFT) / (256 * res);
    assert.ok(Math.abs(tiles - Math.round(tiles)) < 1e-6, `origin ${ox} on the grid`);
    const rows = (ORIGIN_SHIFT - oy) / (256 * res);
    assert.ok(Math.abs(rows - Math.round(rows)) < 1e-6, `origin ${oy} on the grid`);
  });
});
