/**
 * DsmChange downloads over the demo town, checked against GDAL: both DSMs warped by the gdalwarp
 * command onto the AOI grid computed here from the Mercator formulas, subtracted here.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEMO_LANDMARKS } from '@nadir/demo-town';
import { gdalinfo, run, tempDir } from '../support/fixtures.js';
import { readRaster } from '../support/pixels.js';
import { BEFORE, type ChangeTown, changeTown, changeUrl, HURRICANE, OLDEST, tokenFor } from './change-town.js';

const STORE = DEMO_LANDMARKS.find((l) => l.id === 'red-roof-store') as (typeof DEMO_LANDMARKS)[number];
const RADIUS = 90;
const NODATA = -9999;

/** The AOI square in EPSG:3857, from the formulas (not from src/geo). */
function aoiBounds(lon: number, lat: number, radius: number): [number, number, number, number] {
  const R = 6378137;
  const x = (lon * Math.PI * R) / 180;
  const y = R * Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
  const half = radius / Math.cos((lat * Math.PI) / 180);
  return [x - half, y - half, x + half, y + half];
}

describe('DsmChange: after - before on the DetailDsm grid', () => {
  let town: ChangeTown;
  let scratch: { path: string; remove: () => Promise<void> };
  let token: string;

  before(async () => {
    town = await changeTown();
    scratch = await tempDir('dsm-change');
    token = await tokenFor(town, STORE.lon, STORE.lat, RADIUS);
  });
  after(async () => {
    await town?.close();
    await scratch?.remove();
  });

  async function download(file: string, size: number, baseline?: string, name = file): Promise<string> {
    const url = changeUrl({
      after: HURRICANE,
      baseline,
      lon: STORE.lon,
      lat: STORE.lat,
      radius: RADIUS,
      size,
      token,
      file,
    });
    const response = await town.api.get(url);
    assert.equal(response.status, 200, `${file}: ${await response.clone().text()}`);
    const path = join(scratch.path, `${size}-${name}`);
    await writeFile(path, Buffer.from(await response.arrayBuffer()));
    return path;
  }

  /** gdalwarp from the survey's COG onto the AOI grid, as a customer would make it. */
  async function referenceHeights(surveyId: string, size: number): Promise<Float64Array> {
    const asset = town.surveys.get(surveyId)?.assets.DetailDsm;
    assert.ok(asset);
    const out = join(scratch.path, `ref-${surveyId}-${size}.tif`);
    const [minX, minY, maxX, maxY] = aoiBounds(STORE.lon, STORE.lat, RADIUS);
    await run('gdalwarp', [
      '-overwrite',
      '-q',
      '-t_srs',
      'EPSG:3857',
      '-te',
      `${minX}`,
      `${minY}`,
      `${maxX}`,
      `${maxY}`,
      '-ts',
      `${size}`,
      `${size}`,
      '-r',
      'bilinear',
      '-ot',
      'Float32',
      '-dstnodata',
      `${NODATA}`,
      join(town.dataDir, asset.uri),
      out,
    ]);
    return (await readRaster(out)).bands[0] as Float64Array;
  }

  for (const size of [600, 437]) {
    test(`${size} px: every value is the gdalwarp reference's after - before to 1 mm, nodata where either has none`, async () => {
      const path = await download('DsmChange.tif', size, BEFORE);
      const [afterHeights, beforeHeights, got] = await Promise.all([
        referenceHeights(HURRICANE, size),
        referenceHeights(BEFORE, size),
        readRaster(path),
      ]);
      const values = got.bands[0] as Float64Array;
      assert.equal(values.length, size * size);
      let compared = 0;
      let changed = 0;
      for (let i = 0; i < values.length; i++) {
        const a = afterHeights[i] as number;
        const b = beforeHeights[i] as number;
        if (a === NODATA || b === NODATA) {
          assert.equal(values[i], NODATA, `pixel ${i}: nodata expected`);
          continue;
        }
        compared++;
        if (Math.abs(a - b) > 2) changed++;
        assert.ok(Math.abs((values[i] as number) - (a - b)) <= 1e-3, `pixel ${i}: ${values[i]} vs ${a - b}`);
      }
      // The AOI is inside both surveys, and the storm changed something in it.
      assert.ok(compared > 0.9 * values.length, `compared ${compared}`);
      assert.ok(changed > 100, `changed ${changed}`);
    });
  }

  test('the tif is Float32 EPSG:3857 on the same grid as DetailDsm, nodata -9999; world files match', async () => {
    const size = 500;
    const change = await gdalinfo(await download('DsmChange.tif', size, BEFORE));
    const query = new URLSearchParams({
      transactionToken: token,
      point: `${STORE.lon},${STORE.lat}`,
      radius: `${RADIUS}`,
      size: `${size}x${size}`,
    });
    const dsmResponse = await town.api.get(`/staticmap/v2/surveys/${HURRICANE}/DetailDsm.tif?${query}`);
    assert.equal(dsmResponse.status, 200);
    const dsmPath = join(scratch.path, 'dsm.tif');
    await writeFile(dsmPath, Buffer.from(await dsmResponse.arrayBuffer()));
    const dsm = await gdalinfo(dsmPath);
    assert.deepEqual(change.size, [size, size]);
    assert.deepEqual(change.geoTransform, dsm.geoTransform);
    const [minX, , , maxY] = aoiBounds(STORE.lon, STORE.lat, RADIUS);
    assert.ok(Math.abs(change.geoTransform[0] - minX) < 1e-6 && Math.abs(change.geoTransform[3] - maxY) < 1e-6);
    assert.equal(change.bands[0]?.type, 'Float32');
    assert.equal(change.bands[0]?.noDataValue, NODATA);
    assert.match(change.coordinateSystem?.wkt ?? '', /3857|Pseudo-Mercator/);

    for (const format of ['tfw', 'pgw', 'jgw']) {
      const response = await town.api.get(
        changeUrl({
          after: HURRICANE,
          baseline: BEFORE,
          lon: STORE.lon,
          lat: STORE.lat,
          radius: RADIUS,
          size,
          token,
          file: `DsmChange.${format}`,
        }),
      );
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/plain');
      const lines = (await response.text()).trim().split('\n').map(Number);
      const [x0, pw, , y0, , ph] = change.geoTransform;
      // World files print 15 significant digits.
      for (const [k, want] of [pw, 0, 0, ph].entries()) assert.ok(Math.abs((lines[k] as number) - want) < 1e-12);
      assert.ok(Math.abs((lines[4] as number) - (x0 + pw / 2)) < 1e-6);
      assert.ok(Math.abs((lines[5] as number) - (y0 + ph / 2)) < 1e-6);
    }
  });

  test('png: the diverging ramp, transparent exactly where the tif has no change value; jpg opens', async () => {
    const size = 300;
    const tif = await readRaster(await download('DsmChange.tif', size, BEFORE));
    const png = await readRaster(await download('DsmChange.png', size, BEFORE));
    assert.equal(png.bands.length, 4);
    const { changeColour } = await import('../../src/raster/change-ramp.js');
    let checked = 0;
    for (let i = 0; i < size * size; i++) {
      const d = tif.bands[0]?.[i] as number;
      const alpha = png.bands[3]?.[i] as number;
      if (d === NODATA) {
        assert.equal(alpha, 0);
        continue;
      }
      assert.equal(alpha, 255);
      const expected = changeColour(d);
      for (let k = 0; k < 3; k++) assert.ok(Math.abs((png.bands[k]?.[i] as number) - expected[k]!) <= 2, `pixel ${i}`);
      checked++;
    }
    assert.ok(checked > 0);
    const jpg = await gdalinfo(await download('DsmChange.jpg', size, BEFORE));
    assert.deepEqual(jpg.size, [size, size]);
    assert.equal(jpg.bands.length, 3);
  });

  test('without baseline the newest earlier survey over the AOI is the baseline', async () => {
    const url = changeUrl({
      after: HURRICANE,
      lon: STORE.lon,
      lat: STORE.lat,
      radius: RADIUS,
      size: 100,
      token,
      file: 'DsmChange.json',
    });
    const response = await town.api.get(url);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-survey-ids'), `${HURRICANE},${BEFORE}`);
    const body = (await response.json()) as { after: { id: string }; baseline: { id: string; captureDate: string } };
    assert.equal(body.after.id, HURRICANE);
    assert.deepEqual(body.baseline, { id: BEFORE, captureDate: '2025-04-02' });
    // And an explicit older baseline is honoured.
    const older = await town.api.get(
      changeUrl({
        after: HURRICANE,
        baseline: OLDEST,
        lon: STORE.lon,
        lat: STORE.lat,
        radius: RADIUS,
        size: 100,
        token,
        file: 'DsmChange.json',
      }),
    );
    assert.equal(((await older.json()) as { baseline: { id: string } }).baseline.id, OLDEST);
  });

  test('every answer with one token bills one transaction', async () => {
    const usage = await town.api.services.accounts.usage(town.accountId);
    assert.equal(
      usage.months.reduce((sum, month) => sum + month.transactions, 0),
      1,
    );
  });
});
