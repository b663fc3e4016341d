import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isNadirError } from '../../src/errors.js';
import { aoiGrid, formatWorldFileNumber, MAX_IMAGE_SIZE, parseSize, worldFileText } from '../../src/geo/aoi-grid.js';
import { approx, approxRel, mulberry32 } from './helpers.js';

/** The AOI square in EPSG:3857 written out again from the spherical Mercator formulas. */
function referenceSquare(lon: number, lat: number, radius: number) {
  const R = 6378137;
  const x = (R * lon * Math.PI) / 180;
  const y = R * Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
  const half = radius / Math.cos((lat * Math.PI) / 180);
  return { minX: x - half, maxX: x + half, minY: y - half, maxY: y + half, side: 2 * half };
}

function assertInvalidSize(raw: unknown, pattern: RegExp): void {
  assert.throws(
    () => parseSize(raw),
    (error: unknown) => {
      assert.ok(isNadirError(error), 'a NadirError');
      assert.equal(error.code, 'INVALID_PARAMETER');
      assert.equal(error.details.parameter, 'size');
      assert.match(error.message, pattern);
      return true;
    },
    `size ${JSON.stringify(raw)}`,
  );
}

describe('parseSize', () => {
  it('accepts square sizes from 1x1 to 5000x5000', () => {
    assert.equal(parseSize('1x1'), 1);
    assert.equal(parseSize('512x512'), 512);
    assert.equal(parseSize('1000x1000'), 1000);
    assert.equal(parseSize('4999x4999'), 4999);
    assert.equal(parseSize('5000x5000'), MAX_IMAGE_SIZE);
  });

  it('rejects non-square sizes', () => {
    assertInvalidSize('512x256', /square/);
    assertInvalidSize('1x2', /square/);
    assertInvalidSize('5000x4999', /square/);
  });

  it('rejects sizes out of range', () => {
    assertInvalidSize('0x0', /from 1x1 to 5000x5000/);
    assertInvalidSize('5001x5001', /from 1x1 to 5000x5000/);
    assertInvalidSize('10000x10000', /from 1x1 to 5000x5000/);
    assertInvalidSize(`${'9'.repeat(400)}x${'9'.repeat(400)}`, /from 1x1 to 5000x5000/);
  });

  it('rejects junk, signs, decimals, spaces, other separators and leading zeros', () => {
    const malformed = [
      '512',
      'x512',
      '512x',
      '512x512x512',
      '512X512',
      '512*512',
      '512,512',
      ' 512x512',
      '512x512 ',
      '512 x 512',
      '+512x+512',
      '-512x-512',
      '512.0x512.0',
      '5e2x5e2',
      '0x200x0x200',
      '512x512\n',
      'abcxabc',
      '１２x１２',
    ];
    for (const raw of malformed) assertInvalidSize(raw, /\{width\}x\{height\}/);
    assertInvalidSize('0512x0512', /leading zeros/);
    assertInvalidSize('007x7', /leading zeros/);
  });

  it('requires a string', () => {
    for (const raw of [undefined, '', null, 512, ['512x512'], { w: 512 }]) assertInvalidSize(raw, /required/);
  });

  it('shortens long junk in the message', () => {
    assert.throws(
      () => parseSize(`${'a'.repeat(10_000)}`),
      (error: Error) => error.message.length < 200,
    );
  });
});

describe('aoiGrid', () => {
  const places = [
    { lon: 0, lat: 0 },
    { lon: -89.5417, lat: 44.1188 },
    { lon: 115.2, lat: -8.6 },
    { lon: 24.94, lat: 60.17 },
    { lon: -179.99, lat: -77.8 },
    { lon: 179.999, lat: 84 },
  ];

  for (const { lon, lat } of places) {
    for (const radius of [1, 37.5, 100]) {
      for (const size of [1, 7, 512, 5000]) {
        it(`covers the AOI square at (${lon}, ${lat}) radius ${radius} with ${size} px`, () => {
          const grid = aoiGrid({ lon, lat, radius }, size);
          const ref = referenceSquare(lon, lat, radius);
          const tolerance = 1e-7; // metres: float rounding of ~1e7 coordinates
          approx(grid.bounds.minX, ref.minX, tolerance, 'minX');
          approx(grid.bounds.maxX, ref.maxX, tolerance, 'maxX');
          approx(grid.bounds.minY, ref.minY, tolerance, 'minY');
          approx(grid.bounds.maxY, ref.maxY, tolerance, 'maxY');
          approxRel(grid.pixelWidth, ref.side / size, 1e-9, 'pixel width = side / size');
          approxRel(grid.pixelHeight, ref.side / size, 1e-9, 'pixel height = side / size');
          approxRel(grid.groundResolution, (2 * radius) / size, 1e-15, 'ground GSD = 2 x radius / size');
          const [x0, w, r1, y0, r2, h] = grid.geoTransform;
          assert.deepEqual([r1, r2], [0, 0], 'north up');
          assert.equal(x0, grid.bounds.minX);
          assert.equal(y0, grid.bounds.maxY);
          assert.equal(w, grid.pixelWidth);
          assert.equal(h, -grid.pixelHeight);
          // The last pixel edge lands on the far side of the square.
          approx(x0 + size * w, ref.maxX, tolerance, 'east edge');
          approx(y0 + size * h, ref.minY, tolerance, 'south edge');
          // A Mercator metre is cos(lat) ground metres: the pixel is groundResolution on the ground.
          approxRel(grid.pixelWidth * Math.cos((lat * Math.PI) / 180), grid.groundResolution, 1e-9);
        });
      }
    }
  }

  it('is centred on the point', () => {
    const grid = aoiGrid({ lon: 12.5, lat: 41.9, radius: 80 }, 333);
    const ref = referenceSquare(12.5, 41.9, 80);
    approx((grid.bounds.minX + grid.bounds.maxX) / 2, (ref.minX + ref.maxX) / 2, 1e-8);
    approx((grid.bounds.minY + grid.bounds.maxY) / 2, (ref.minY + ref.maxY) / 2, 1e-8);
  });

  it('rejects sizes that are not integers from 1 to 5000', () => {
    for (const size of [0, -1, 1.5, 5001, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => aoiGrid({ lon: 0, lat: 0, radius: 10 }, size), /size must be an integer/);
    }
  });
});

describe('world file', () => {
  it('has six lines: pixel width, 0, 0, negative pixel height, centre of the upper-left pixel', () => {
    const grid = aoiGrid({ lon: -89.5417, lat: 44.1188, radius: 50 }, 1000);
    const text = worldFileText(grid);
    assert.ok(text.endsWith('\n'));
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, 6);
    for (const line of lines) assert.match(line, /^-?\d+(\.\d+)?$/, 'plain decimal, no exponent');
    const [a, d, b, e, c, f] = lines.map(Number) as [number, number, number, number, number, number];
    const ref = referenceSquare(-89.5417, 44.1188, 50);
    const pixel = ref.side / 1000;
    approxRel(a, pixel, 1e-10); // the reference side itself carries ~1e-11 of float rounding
    assert.equal(d, 0);
    assert.equal(b, 0);
    approxRel(e, -pixel, 1e-10);
    approx(c, ref.minX + pixel / 2, 1e-7);
    approx(f, ref.maxY - pixel / 2, 1e-7);
  });

  it('reproduces the geotransform to far below a pixel for every legal grid', () => {
    const random = mulberry32(4);
    for (let i = 0; i < 2000; i++) {
      const aoi = { lon: -180 + 360 * random(), lat: -85 + 170 * random(), radius: 1 + 99 * random() };
      const size = 1 + Math.floor(random() * MAX_IMAGE_SIZE);
      const grid = aoiGrid(aoi, size);
      const [a, , , e, c, f] = worldFileText(grid).trimEnd().split('\n').map(Number) as number[];
      const [x0, w, , y0, , h] = grid.geoTransform;
      // 1e-4 of a pixel: 15 digits of a 1e7 coordinate are 1e-8 m, the smallest pixel 0.4 mm.
      approx(c as number, x0 + w / 2, w * 1e-4, 'x of upper-left centre');
      approx(f as number, y0 + h / 2, w * 1e-4, 'y of upper-left centre');
      approxRel(a as number, w, 1e-13, 'pixel width');
      approxRel(e as number, h, 1e-13, 'pixel height');
    }
  });

  it('formats numbers with 15 significant digits, no exponent, no trailing zeros', () => {
    assert.equal(formatWorldFileNumber(0), '0');
    assert.equal(formatWorldFileNumber(-0), '0');
    assert.equal(formatWorldFileNumber(0.04), '0.04');
    assert.equal(formatWorldFileNumber(-0.04), '-0.04');
    assert.equal(formatWorldFileNumber(0.0004), '0.0004');
    assert.equal(formatWorldFileNumber(1e-7), '0.0000001');
    assert.equal(formatWorldFileNumber(20037508.342789244), '20037508.3427892');
    assert.equal(formatWorldFileNumber(-9967820.026120832), '-9967820.02612083');
    assert.equal(formatWorldFileNumber(0.16715471353381872), '0.167154713533819');
    assert.equal(formatWorldFileNumber(1000), '1000');
    assert.equal(formatWorldFileNumber(123456789012345), '123456789012345');
    assert.throws(() => formatWorldFileNumber(Number.NaN));
  });
});
