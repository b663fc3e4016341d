import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CONTENT_TYPE,
  colourReliefFile,
  isRasterFormat,
  isWorldFileFormat,
  RASTER_FORMATS,
  RasterEngine,
  RENDER_OVERHEAD_BYTES,
  rampColour,
  renderWorldFile,
  VIRIDIS,
  WORLD_FILE_IMAGE,
  workingBytesPerPixel,
} from '../../src/raster/index.js';
import { LocalStorage } from '../../src/storage/local-storage.js';

describe('formats', () => {
  it('are the spec values, case-sensitive', () => {
    assert.deepEqual([...RASTER_FORMATS], ['tif', 'jpg', 'png', 'jgw', 'pgw', 'tfw']);
    for (const format of RASTER_FORMATS) assert.ok(isRasterFormat(format));
    for (const format of ['TIF', 'jpeg', 'tiff', 'gif', '', 'png ']) assert.ok(!isRasterFormat(format), format);
    assert.deepEqual(
      RASTER_FORMATS.filter((f) => isWorldFileFormat(f)),
      ['jgw', 'pgw', 'tfw'],
    );
    assert.deepEqual(WORLD_FILE_IMAGE, { jgw: 'jpg', pgw: 'png', tfw: 'tif' });
  });

  it('have the Content-Type decisions.md names', () => {
    assert.deepEqual(CONTENT_TYPE, {
      tif: 'image/tiff',
      jpg: 'image/jpeg',
      png: 'image/png',
      jgw: 'text/plain',
      pgw: 'text/plain',
      tfw: 'text/plain',
    });
  });
});

describe('world files', () => {
  const aoi = { lon: 115.16077, lat: -8.585, radius: 90 };

  it('are the same six lines for jgw, pgw and tfw of one request', () => {
    const files = (['jgw', 'pgw', 'tfw'] as const).map((format) => renderWorldFile(aoi, 700, format));
    for (const file of files) {
      assert.equal(file.contentType, 'text/plain');
      assert.equal(file.body.toString(), files[0]?.body.toString());
    }
    assert.deepEqual(
      files.map((f) => f.fileExtension),
      ['jgw', 'pgw', 'tfw'],
    );
    const lines = files[0]?.body.toString().trimEnd().split('\n') ?? [];
    assert.equal(lines.length, 6);
    // Southern hemisphere: y is negative, the pixel height line still negative.
    assert.ok(Number(lines[3]) < 0 && Number(lines[5]) < 0);
    // Side 180 ground metres / cos(8.585 deg) in Mercator metres, over 700 pixels.
    const pixel = 180 / Math.cos((8.585 * Math.PI) / 180) / 700;
    assert.ok(Math.abs(Number(lines[0]) - pixel) < pixel * 1e-9, 'float rounding of 1e7 m bounds only');
  });

  it('come straight from the engine without admission', async () => {
    const engine = new RasterEngine({ storage: new LocalStorage('/nowhere'), admission: { budget: 1, maxWaitMs: 0 } });
    const file = await engine.renderAoi({
      asset: { uri: 'file:///nowhere.tif', kind: 'rgb' },
      aoi,
      size: 5000,
      format: 'pgw',
    });
    assert.equal(file.body.toString(), renderWorldFile(aoi, 5000, 'pgw').body.toString());
    assert.equal(engine.admission.stats.admitted, 0);
  });
});

describe('DSM colour ramp', () => {
  it('spreads viridis evenly over the height range, nodata transparent', () => {
    const lines = colourReliefFile({ min: 100, max: 180 }).trimEnd().split('\n');
    assert.equal(lines.length, VIRIDIS.length + 1);
    assert.equal(lines[0], '100 68 1 84 255');
    assert.equal(lines[4], '140 33 145 140 255');
    assert.equal(lines[8], '180 253 231 37 255');
    assert.equal(lines[9], 'nv 0 0 0 0');
  });

  it('draws a flat AOI in the middle colour', () => {
    const lines = colourReliefFile({ min: 250, max: 250 }).trimEnd().split('\n');
    assert.equal(lines[0], '249.5 68 1 84 255');
    assert.equal(lines[8], '250.5 253 231 37 255');
  });

  it('interpolates between stops like gdaldem', () => {
    assert.deepEqual(rampColour(0), VIRIDIS[0]);
    assert.deepEqual(rampColour(1), VIRIDIS[8]);
    assert.deepEqual(rampColour(-3), VIRIDIS[0]);
    assert.deepEqual(rampColour(0.5), VIRIDIS[4]);
    assert.deepEqual(rampColour(1 / 16), [69.5, 23, 103.5]);
  });

  it('lightness rises along the ramp (higher is lighter)', () => {
    const luma = ([r, g, b]: readonly number[]) =>
      0.2126 * (r as number) + 0.7152 * (g as number) + 0.0722 * (b as number);
    for (let i = 1; i < VIRIDIS.length; i++) {
      assert.ok(luma(VIRIDIS[i] as readonly number[]) > luma(VIRIDIS[i - 1] as readonly number[]), `stop ${i}`);
    }
  });
});

describe('admission cost', () => {
  it('charges each pipeline its working memory per output pixel, and every render its overhead', () => {
    const engine = new RasterEngine({ storage: new LocalStorage('/nowhere') });
    assert.equal(engine.cost('rgb', 'tif', 1000), RENDER_OVERHEAD_BYTES + 1e6 * workingBytesPerPixel('rgb', 'tif'));
    assert.ok(workingBytesPerPixel('elevation', 'png') > workingBytesPerPixel('elevation', 'tif'));
    // The default budget must fit the largest single request, and not much more than a few of them.
    const largest = Math.max(
      ...(['rgb', 'elevation'] as const).flatMap((kind) =>
        (['tif', 'jpg', 'png'] as const).map((format) => engine.cost(kind, format, 5000)),
      ),
    );
    const { budget } = engine.admission.options;
    assert.ok(budget >= largest, `budget ${budget} fits a ${largest}-byte request`);
    assert.ok(budget < 8 * engine.cost('rgb', 'jpg', 5000), 'eight 5000 x 5000 requests do not all run at once');
  });
});
