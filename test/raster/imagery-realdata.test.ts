/**
 * TrueOrtho / Vert downloads over real surveys, checked with GDAL: the file's CRS, grid, bands and
 * mask, and every pixel against `gdalwarp` run from the same COG onto a grid computed here.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Asset, Survey } from '../../src/catalogue/survey.js';
import type { Aoi } from '../../src/geo/aoi.js';
import { RasterEngine } from '../../src/raster/index.js';
import { gdalinfo, REALDATA, SKIP_REALDATA, tempDir } from '../support/fixtures.js';
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

interface Case {
  name: string;
  survey: [captureDate: string, assets: Record<string, string>];
  type: 'TrueOrtho' | 'Vert';
  aoi: Aoi;
  /** One size that upsamples the COG, one that shrinks it enough to read an overview. */
  sizes: number[];
}

const CASES: Case[] = [
  {
    name: 'Wisconsin (UTM 16N)',
    survey: ['2021-07-02', { TrueOrtho: 'fieldimager-ws5/odm_orthophoto.tif' }],
    type: 'TrueOrtho',
    aoi: { lon: -89.5417, lat: 44.11881, radius: 45 },
    sizes: [640, 90],
  },
  {
    name: 'Bali (UTM 50S, southern hemisphere, alpha)',
    survey: ['2019-08-01', { TrueOrtho: 'rio-tiler/pix4d_alpha_nodata.tif' }],
    type: 'TrueOrtho',
    aoi: { lon: 115.16077, lat: -8.585, radius: 90 },
    sizes: [700, 120],
  },
  {
    name: 'Colorado (NAD83 UTM 13N, JPEG COG source)',
    survey: ['2014-04-16', { Vert: 'rio-tiler/cog_rgb.tif' }],
    type: 'Vert',
    aoi: { lon: -104.775, lat: 38.95361, radius: 25 },
    sizes: [333, 40],
  },
];

describe('imagery downloads over real surveys', { skip: SKIP_REALDATA }, () => {
  let dir: TempDir;
  const engine = new RasterEngine({ storage: storageIn(() => dir) });
  const surveys = new Map<string, Survey>();

  before(async () => {
    dir = await tempDir('raster-imagery');
    for (const c of CASES)
      surveys.set(c.name, await ingestRealSurvey(dir.path, c.name.split(' ')[0] as string, ...c.survey));
  });
  after(() => dir.remove());

  for (const c of CASES) {
    const asset = () => surveys.get(c.name)?.assets[c.type] as Asset;

    for (const size of c.sizes) {
      describe(`${c.name}, ${size} px`, () => {
        let referencePath: string;
        before(async () => {
          referencePath = `${dir.path}/${c.type}-${size}-${c.survey[0]}-ref.tif`;
          await gdalwarpAoi(cogPath(asset(), dir), 'rgb', c.aoi, size, referencePath);
        });

        test('tif: EPSG:3857 on the AOI grid, tiled DEFLATE RGB + alpha, pixels as gdalwarp', async () => {
          const out = await engine.renderAoi({ asset: asset(), aoi: c.aoi, size, format: 'tif' });
          assert.equal(out.contentType, 'image/tiff');
          assert.equal(out.fileExtension, 'tif');
          const path = await saveBody(dir.path, `${c.type}-${size}.tif`, out.body);
          const info = await gdalinfo(path);
          assert.match(info.coordinateSystem?.wkt ?? '', /ID\["EPSG",3857\]\]$/);
          assert.deepEqual(info.size, [size, size]);
          const square = expectedSquare(c.aoi);
          const [x0, w, r1, y0, r2, h] = info.geoTransform;
          const pixel = (square.maxX - square.minX) / size;
          // 1e-6 of a pixel: the grid is exact, only float rounding of 1e7 coordinates remains.
          for (const [actual, expected] of [
            [x0, square.minX],
            [y0, square.maxY],
            [w, pixel],
            [-h, pixel],
          ] as const) {
            assert.ok(Math.abs(actual - expected) < pixel * 1e-6, `geotransform ${actual} vs ${expected}`);
          }
          assert.deepEqual([r1, r2], [0, 0]);
          assert.deepEqual(
            info.bands.map((b) => [b.type, b.colorInterpretation]),
            [
              ['Byte', 'Red'],
              ['Byte', 'Green'],
              ['Byte', 'Blue'],
              ['Byte', 'Alpha'],
            ],
          );
          assert.equal(info.metadata.IMAGE_STRUCTURE?.COMPRESSION, 'DEFLATE');
          assert.equal(info.metadata.IMAGE_STRUCTURE?.PREDICTOR, '2');
          if (size > 256) assert.deepEqual(info.bands[0]?.block, [256, 256]);

          // No tolerance: the same GDAL runs the same bilinear warp on the same COG, so the values
          // are identical (threading and chunking split the work, not the arithmetic).
          const ours = await readRaster(path, [1, 2, 3]);
          const ref = await readRaster(referencePath, [1, 2, 3]);
          const d = difference(ours, ref, 3);
          assert.ok(d.both > size * size * 0.2, `${d.both} pixels compared`);
          assert.equal(d.onlyOurs, 0, 'no data invented');
          assert.equal(d.onlyReference, 0, 'no data dropped');
          assert.equal(d.maxError, 0, 'pixel values identical to gdalwarp');

          if (size < 256) {
            // Shrunk several times: read from an overview, as gdalwarp chooses. Forcing the
            // full-resolution level gives different values, so the match above is not by chance.
            const fullResolution = `${referencePath}.ovr-none.tif`;
            await gdalwarpAoi(cogPath(asset(), dir), 'rgb', c.aoi, size, fullResolution, ['-ovr', 'NONE']);
            const other = difference(ours, await readRaster(fullResolution, [1, 2, 3]), 3);
            assert.ok(other.maxError > 0, 'full resolution would differ');
          }
        });

        test('png: RGBA, the same pixels and alpha as the tif', async () => {
          const [tif, png] = await Promise.all(
            (['tif', 'png'] as const).map((format) => engine.renderAoi({ asset: asset(), aoi: c.aoi, size, format })),
          );
          assert.equal(png?.contentType, 'image/png');
          assert.equal(png?.body.subarray(1, 4).toString(), 'PNG');
          const pngPath = await saveBody(dir.path, `${c.type}-${size}.png`, png?.body as Buffer);
          const info = await gdalinfo(pngPath);
          assert.deepEqual(info.size, [size, size]);
          assert.deepEqual(
            info.bands.map((b) => b.colorInterpretation),
            ['Red', 'Green', 'Blue', 'Alpha'],
          );
          const tifPath = await saveBody(dir.path, `${c.type}-${size}-b.tif`, tif?.body as Buffer);
          const a = await readRaster(pngPath, [1, 2, 3, 4]);
          const b = await readRaster(tifPath, [1, 2, 3, 4]);
          assert.deepEqual(a.bands, b.bands, 'lossless: identical to the GeoTIFF');
        });

        test('jpg: RGB, colours as gdalwarp within JPEG error, no-data black', async () => {
          const out = await engine.renderAoi({ asset: asset(), aoi: c.aoi, size, format: 'jpg' });
          assert.equal(out.contentType, 'image/jpeg');
          assert.deepEqual([...out.body.subarray(0, 3)], [0xff, 0xd8, 0xff]);
          // A plain JPEG: it ends at the end-of-image marker (no GDAL mask appended).
          assert.deepEqual([...out.body.subarray(-2)], [0xff, 0xd9]);
          const path = await saveBody(dir.path, `${c.type}-${size}.jpg`, out.body);
          const info = await gdalinfo(path);
          assert.deepEqual(info.size, [size, size]);
          assert.equal(info.bands.length, 3);
          const ours = await readRaster(path, [1, 2, 3]);
          const ref = await readRaster(referencePath, [1, 2, 3]);
          // Compare only where the reference has data; JPEG's own mask is "all valid".
          const d = difference({ ...ours, mask: ref.mask }, ref, 3, 24);
          // JPEG quality 90 with 4:2:0 chroma subsampling: measured mean errors are 1.2 to 2.9
          // levels, 4.2 on a 40 px picture of cars (all edges); single values reach ~40 only at
          // sharp colour edges and where black no-data bleeds into an 8 x 8 block.
          assert.ok(d.meanError < 6, `mean channel error ${d.meanError.toFixed(2)}`);
          assert.ok(d.bigFraction < 0.01, `${(100 * d.bigFraction).toFixed(2)}% of values off by > 24`);
          // No-data is black: the mean over the reference's empty pixels is near 0.
          let sum = 0;
          let count = 0;
          for (let i = 0; i < ref.mask.length; i++) {
            if (ref.mask[i] !== 0) continue;
            count++;
            for (const band of ours.bands) sum += band[i] as number;
          }
          if (count > 0) assert.ok(sum / (3 * count) < 4, `no-data mean level ${(sum / (3 * count)).toFixed(2)}`);
        });

        test('jgw, pgw and tfw: the GeoTIFF transform moved to the upper-left pixel centre', async () => {
          const tif = await engine.renderAoi({ asset: asset(), aoi: c.aoi, size, format: 'tif' });
          const info = await gdalinfo(await saveBody(dir.path, `${c.type}-${size}-wf.tif`, tif.body));
          for (const format of ['jgw', 'pgw', 'tfw'] as const) {
            const file = await engine.renderAoi({ asset: asset(), aoi: c.aoi, size, format });
            assert.equal(file.contentType, 'text/plain');
            assert.equal(file.fileExtension, format);
            assertWorldFileMatches(file.body.toString('ascii'), info.geoTransform);
          }
        });
      });
    }
  }

  for (const c of CASES) {
    test(`${c.name}: agrees with gdalwarp from the original source, not shifted`, async () => {
      const asset = surveys.get(c.name)?.assets[c.type] as Asset;
      const size = c.sizes[0] as number;
      const source = join(REALDATA, Object.values(c.survey[1])[0] as string);
      const direct = `${dir.path}/${c.type}-${c.survey[0]}-direct.tif`;
      await gdalwarpAoi(source, 'rgb', c.aoi, size, direct);
      const out = await engine.renderAoi({ asset, aoi: c.aoi, size, format: 'png' });
      const ours = await readRaster(await saveBody(dir.path, `${c.type}-direct.png`, out.body), [1, 2, 3]);
      const ref = await readRaster(direct, [1, 2, 3]);
      const aligned = difference(ours, ref, 3);
      const shifted = difference(shiftColumns(ours, 1), ref, 3);
      // Two bilinear resamplings and the COG's JPEG (quality 90) against one resampling: a few
      // levels on average (measured 2.0 to 3.9). Moving our picture by one pixel makes it clearly
      // worse (measured 5.3 to 9.1), so a misregistration would show.
      assert.equal(aligned.onlyOurs, 0, 'no data where the source has none');
      assert.ok(aligned.onlyReference < aligned.both * 0.05, `${aligned.onlyReference} source pixels missing`);
      assert.ok(aligned.meanError < 5, `mean channel error ${aligned.meanError.toFixed(2)}`);
      assert.ok(
        aligned.meanError < 0.7 * shifted.meanError,
        `aligned ${aligned.meanError.toFixed(2)} vs shifted by a pixel ${shifted.meanError.toFixed(2)}`,
      );
    });
  }

  test('a pixel outside the survey is transparent, never invented (AOI half off the east edge)', async () => {
    const c = CASES[0] as Case;
    const survey = surveys.get(c.name) as Survey;
    const asset = survey.assets.TrueOrtho as Asset;
    // Centre the AOI on the survey's easternmost valid longitude.
    const eastLon = Math.max(...survey.footprint.flat(2).map(([lon]) => lon));
    const aoi = { lon: eastLon, lat: c.aoi.lat, radius: 40 };
    const size = 400;
    const tif = await engine.renderAoi({ asset, aoi, size, format: 'tif' });
    const raster = await readRaster(await saveBody(dir.path, 'half.tif', tif.body), [1, 2, 3]);
    let westValid = 0;
    for (let row = 0; row < size; row++) {
      for (let column = 0; column < size; column++) {
        const valid = raster.mask[row * size + column] !== 0;
        // One pixel of slack for the bilinear footprint at the edge of the data.
        if (column > size / 2 + 1) assert.ok(!valid, `pixel (${column}, ${row}) east of the survey is transparent`);
        if (column < size / 2 && valid) westValid++;
      }
    }
    assert.ok(westValid > (size * size) / 8, `the western half has data (${westValid} pixels)`);
    const png = await engine.renderAoi({ asset, aoi, size, format: 'png' });
    const pngRaster = await readRaster(await saveBody(dir.path, 'half.png', png.body), [1, 2, 3]);
    assert.deepEqual(pngRaster.mask, raster.mask, 'png alpha = tif alpha');
  });
});

/** The raster moved one column east (the first column repeats): a deliberately misregistered copy. */
function shiftColumns(raster: Raster, by: number): Raster {
  const move = <T extends Float64Array | Uint8Array>(values: T): T => {
    const out = values.slice() as T;
    for (let row = 0; row < raster.height; row++) {
      const start = row * raster.width;
      out.set(values.subarray(start, start + raster.width - by), start + by);
    }
    return out;
  };
  return { ...raster, bands: raster.bands.map(move), mask: move(raster.mask) };
}
