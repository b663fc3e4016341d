/**
 * DetailDsm downloads over the real Wisconsin survey: the Float32 GeoTIFF against `gdalwarp`
 * from the same COG, and the picture (ramp x hillshade) against those heights.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Asset, Survey } from '../../src/catalogue/survey.js';
import type { Aoi } from '../../src/geo/aoi.js';
import { RasterEngine, VIRIDIS } from '../../src/raster/index.js';
import { gdalinfo, SKIP_REALDATA, tempDir } from '../support/fixtures.js';
import { type Raster, readRaster } from '../support/pixels.js';
import {
  assertWorldFileMatches,
  cogPath,
  difference,
  expectedSquare,
  gdalwarpAoi,
  ingestRealSurvey,
  saveBody,
  storageIn,
  type TempDir,
} from './helpers.js';

const CENTRE: Aoi = { lon: -89.5417, lat: 44.11881, radius: 45 };

describe('DetailDsm downloads over the Wisconsin survey', { skip: SKIP_REALDATA }, () => {
  let dir: TempDir;
  let survey: Survey;
  const engine = new RasterEngine({ storage: storageIn(() => dir) });
  const dsm = () => survey.assets.DetailDsm as Asset;

  before(async () => {
    dir = await tempDir('raster-dsm');
    survey = await ingestRealSurvey(dir.path, 'wisconsin', '2021-07-02', {
      TrueOrtho: 'fieldimager-ws5/odm_orthophoto.tif',
      DetailDsm: 'fieldimager-ws5/dsm.tif',
    });
  });
  after(() => dir.remove());

  /** gdalwarp's heights for the grid, read back (mask from nodata). */
  async function referenceHeights(aoi: Aoi, size: number): Promise<Raster> {
    const path = `${dir.path}/ref-${aoi.lon}-${aoi.radius}-${size}.tif`;
    await gdalwarpAoi(cogPath(dsm(), dir), 'elevation', aoi, size, path);
    return readRaster(path, [1]);
  }

  for (const size of [500, 70]) {
    test(`tif ${size} px: one Float32 band with nodata -9999, EPSG:3857, DEFLATE predictor 3, as gdalwarp`, async () => {
      const out = await engine.renderAoi({ asset: dsm(), aoi: CENTRE, size, format: 'tif' });
      assert.equal(out.contentType, 'image/tiff');
      const path = await saveBody(dir.path, `dsm-${size}.tif`, out.body);
      const info = await gdalinfo(path);
      assert.match(info.coordinateSystem?.wkt ?? '', /ID\["EPSG",3857\]\]$/);
      assert.deepEqual(info.size, [size, size]);
      assert.equal(info.bands.length, 1);
      assert.equal(info.bands[0]?.type, 'Float32');
      assert.equal(info.bands[0]?.noDataValue, -9999);
      assert.equal(info.metadata.IMAGE_STRUCTURE?.COMPRESSION, 'DEFLATE');
      assert.equal(info.metadata.IMAGE_STRUCTURE?.PREDICTOR, '3');
      const square = expectedSquare(CENTRE);
      const pixel = (square.maxX - square.minX) / size;
      const [x0, w, , y0, , h] = info.geoTransform;
      assert.ok(Math.abs(x0 - square.minX) < pixel * 1e-6 && Math.abs(y0 - square.maxY) < pixel * 1e-6, 'origin');
      assert.ok(Math.abs(w - pixel) < pixel * 1e-9 && Math.abs(-h - pixel) < pixel * 1e-9, 'pixel size');

      // Lossless DEFLATE of the same warp: the same float32 numbers, no tolerance.
      const d = difference(await readRaster(path, [1]), await referenceHeights(CENTRE, size), 1);
      assert.ok(d.both > size * size * 0.3);
      assert.deepEqual([d.onlyOurs, d.onlyReference, d.maxError], [0, 0, 0]);

      const tfw = await engine.renderAoi({ asset: dsm(), aoi: CENTRE, size, format: 'tfw' });
      assertWorldFileMatches(tfw.body.toString(), info.geoTransform);
    });
  }

  test('png: transparent exactly where there are no heights, colours span the ramp over this AOI', async () => {
    const size = 500;
    const out = await engine.renderAoi({ asset: dsm(), aoi: CENTRE, size, format: 'png' });
    assert.equal(out.contentType, 'image/png');
    const path = await saveBody(dir.path, 'dsm.png', out.body);
    const info = await gdalinfo(path);
    assert.deepEqual(
      info.bands.map((b) => [b.type, b.colorInterpretation]),
      [
        ['Byte', 'Red'],
        ['Byte', 'Green'],
        ['Byte', 'Blue'],
        ['Byte', 'Alpha'],
      ],
    );
    const picture = await readRaster(path, [1, 2, 3, 4]);
    const heights = await referenceHeights(CENTRE, size);

    // The ramp spans this AOI's own valid heights.
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < heights.mask.length; i++) {
      if (heights.mask[i] === 0) continue;
      min = Math.min(min, heights.bands[0]?.[i] as number);
      max = Math.max(max, heights.bands[0]?.[i] as number);
    }
    assert.ok(out.heightRange, 'the height range is reported');
    assert.ok(Math.abs(out.heightRange.min - min) < 1e-4 && Math.abs(out.heightRange.max - max) < 1e-4);

    const lowest: number[][] = [];
    const highest: number[][] = [];
    for (let i = 0; i < heights.mask.length; i++) {
      const alpha = picture.bands[3]?.[i];
      if (heights.mask[i] === 0) {
        assert.equal(alpha, 0, `pixel ${i} has no height: transparent`);
        continue;
      }
      assert.equal(alpha, 255, `pixel ${i} has a height: opaque`);
      const rgb = [0, 1, 2].map((k) => picture.bands[k]?.[i] as number);
      // Each colour is the ramp colour of its height times one shade factor in 0.4..1.
      const fraction = ((heights.bands[0]?.[i] as number) - min) / (max - min);
      const ramp = viridisAt(fraction);
      // The shade factor, read off the ramp's strongest channel (the most precise ratio).
      const strongest = ramp.indexOf(Math.max(...ramp));
      const shade = (rgb[strongest] as number) / (ramp[strongest] as number);
      for (let k = 0; k < 3; k++) {
        const expected = (ramp[k] as number) * Math.min(1, shade);
        // gdaldem rounds the ramp colour, the product is rounded again: 2 levels of slack.
        assert.ok(Math.abs((rgb[k] as number) - expected) <= 2, `pixel ${i}: ${rgb} vs ${ramp} x ${shade}`);
        assert.ok((rgb[k] as number) >= 0.4 * (ramp[k] as number) - 2, `pixel ${i} not shaded below 40%`);
      }
      if (fraction < 0.02) lowest.push(rgb);
      if (fraction > 0.98) highest.push(rgb);
    }
    // Both ends of the ramp are present: dark purple for the lowest heights, yellow for the highest.
    const mean = (list: number[][], k: number) => list.reduce((s, c) => s + (c[k] as number), 0) / list.length;
    assert.ok(lowest.length > 0 && highest.length > 0);
    assert.ok(mean(lowest, 2) > mean(lowest, 1) && mean(lowest, 0) < 110, `lowest are purple: ${mean(lowest, 0)}`);
    assert.ok(mean(highest, 1) > 150 && mean(highest, 2) < 100, `highest are yellow: ${mean(highest, 1)}`);
  });

  test('jpg: three bands, no-data black, the same colours as the png', async () => {
    const size = 300;
    const [jpg, png] = await Promise.all(
      (['jpg', 'png'] as const).map((format) => engine.renderAoi({ asset: dsm(), aoi: CENTRE, size, format })),
    );
    assert.equal(jpg?.contentType, 'image/jpeg');
    const a = await readRaster(await saveBody(dir.path, 'dsm.jpg', jpg?.body as Buffer), [1, 2, 3]);
    const b = await readRaster(await saveBody(dir.path, 'dsm-300.png', png?.body as Buffer), [1, 2, 3]);
    assert.equal(a.bands.length, 3);
    const d = difference({ ...a, mask: b.mask }, b, 3);
    assert.ok(d.meanError < 4, `JPEG error ${d.meanError}`);
    let dark = 0;
    let empty = 0;
    for (let i = 0; i < b.mask.length; i++) {
      if (b.mask[i] !== 0) continue;
      empty++;
      if (a.bands.every((band) => (band[i] as number) <= 16)) dark++;
    }
    // JPEG's 8 x 8 blocks and halved chroma bleed colour a few pixels into the black at edges.
    assert.ok(empty > 0 && dark > empty * 0.9, `${dark} of ${empty} no-data pixels are black`);
  });

  test('an AOI half off the survey: nodata and transparent there; wholly off: all nodata', async () => {
    const eastLon = Math.max(...survey.footprint.flat(2).map(([lon]) => lon));
    const size = 200;
    for (const [aoi, emptyFrom] of [
      [{ lon: eastLon, lat: CENTRE.lat, radius: 40 }, size / 2 + 2],
      [{ lon: eastLon + 0.01, lat: CENTRE.lat, radius: 40 }, 0],
    ] as const) {
      const tif = await engine.renderAoi({ asset: dsm(), aoi, size, format: 'tif' });
      const png = await engine.renderAoi({ asset: dsm(), aoi, size, format: 'png' });
      const heights = await readRaster(await saveBody(dir.path, 'off.tif', tif.body), [1]);
      const picture = await readRaster(await saveBody(dir.path, 'off.png', png.body), [1, 2, 3, 4]);
      for (let row = 0; row < size; row++) {
        for (let column = emptyFrom; column < size; column++) {
          const i = row * size + column;
          assert.equal(heights.bands[0]?.[i], -9999, `height at (${column}, ${row}) is nodata`);
          assert.equal(picture.bands[3]?.[i], 0, `picture at (${column}, ${row}) is transparent`);
        }
      }
      if (emptyFrom === 0) assert.equal(png.heightRange, undefined, 'no heights, no range');
      else
        assert.ok(
          heights.mask.some((v) => v !== 0),
          'the western half has heights',
        );
    }
  });
});

/** Viridis as the ramp's nine stops, interpolated linearly (gdaldem color-relief's default). */
function viridisAt(fraction: number): number[] {
  assert.deepEqual(VIRIDIS[0], [68, 1, 84], 'viridis starts dark purple');
  assert.deepEqual(VIRIDIS[8], [253, 231, 37], 'viridis ends yellow');
  const position = Math.max(0, Math.min(1, fraction)) * 8;
  const i = Math.min(7, Math.floor(position));
  const t = position - i;
  const a = VIRIDIS[i] as readonly number[];
  const b = VIRIDIS[i + 1] as readonly number[];
  return [0, 1, 2].map((k) => (a[k] as number) * (1 - t) + (b[k] as number) * t);
}
