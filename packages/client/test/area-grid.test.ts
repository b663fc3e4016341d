import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_RADIUS } from '../src/area.js';
import { areaGrid } from '../src/area-grid.js';
import { mosaicVrt } from '../src/node/vrt.js';

const EARTH_RADIUS = 6378137;
const mercatorY = (lat: number) => EARTH_RADIUS * Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
const mercatorX = (lon: number) => (lon * Math.PI * EARTH_RADIUS) / 180;

describe('area grids', () => {
  for (const [name, bbox] of [
    ['Mexico Beach, 290 m', { west: -85.4197, south: 29.9447, east: -85.4167, north: 29.947 }],
    ['across the equator, 1 km', { west: 10, south: -0.005, east: 10.009, north: 0.004 }],
    ['Oslo, long and thin', { west: 10.7, south: 59.91, east: 10.72, north: 59.911 }],
  ] as const) {
    test(`${name}: every cell within 100 m, cells meeting exactly, the box covered`, () => {
      const grid = areaGrid(bbox);
      assert.equal(grid.cells.length, grid.rows * grid.columns);
      for (const cell of grid.cells) {
        assert.ok(cell.aoi.radius <= MAX_RADIUS && cell.aoi.radius > MAX_RADIUS * 0.9, `radius ${cell.aoi.radius}`);
        // The server's image of this AOI: 2 x radius / cos(lat) Mercator metres around the point.
        const side = (2 * cell.aoi.radius) / Math.cos((cell.aoi.point.lat * Math.PI) / 180);
        assert.ok(Math.abs(side - grid.side) < 1e-6, `cell ${cell.row},${cell.column}: side ${side} vs ${grid.side}`);
        assert.ok(Math.abs(mercatorY(cell.aoi.point.lat) - (cell.mercator.minY + cell.mercator.maxY) / 2) < 1e-6);
        const east = grid.cells.find((c) => c.row === cell.row && c.column === cell.column + 1);
        if (east) assert.ok(Math.abs(east.mercator.minX - cell.mercator.maxX) < 1e-9);
        const south = grid.cells.find((c) => c.row === cell.row + 1 && c.column === cell.column);
        if (south) assert.ok(Math.abs(south.mercator.maxY - cell.mercator.minY) < 1e-9);
      }
      assert.ok(grid.mercator.minX <= mercatorX(bbox.west) && grid.mercator.maxX >= mercatorX(bbox.east));
      assert.ok(grid.mercator.minY <= mercatorY(bbox.south) && grid.mercator.maxY >= mercatorY(bbox.north));
    });
  }

  test('a box within one AOI is one cell', () => {
    assert.equal(areaGrid({ west: 0, south: 0, east: 0.001, north: 0.001 }).cells.length, 1);
  });
});

describe('mosaic VRTs', () => {
  test('cells are placed at their offsets on the finest pixel grid, DSMs with nodata', () => {
    const cell = (minX: number, maxY: number) => ({ minX, maxX: minX + 100, maxY, minY: maxY - 100 });
    const vrt = mosaicVrt('DetailDsm', { minX: 0, maxX: 200, minY: 0, maxY: 100 }, [
      { file: 'cells/a_r0c0.tif', size: 500, mercator: cell(0, 100) },
      { file: 'cells/a&b_r0c1.tif', size: 250, mercator: cell(100, 100) },
    ]);
    assert.match(vrt, /<VRTDataset rasterXSize="1000" rasterYSize="500">/);
    assert.match(vrt, /<GeoTransform>0, 0.2, 0, 100, 0, -0.2<\/GeoTransform>/);
    assert.match(
      vrt,
      /<SrcRect xOff="0" yOff="0" xSize="250" ySize="250"\/>\s*<DstRect xOff="500" yOff="0" xSize="500" ySize="500"\/>/,
    );
    assert.match(vrt, /a&amp;b_r0c1\.tif/);
    assert.match(vrt, /<NoDataValue>-9999<\/NoDataValue>/);
    assert.equal((vrt.match(/<VRTRasterBand/g) ?? []).length, 1);
    const photo = mosaicVrt('TrueOrtho', { minX: 0, maxX: 100, minY: 0, maxY: 100 }, [
      { file: 'x.tif', size: 10, mercator: cell(0, 100) },
    ]);
    assert.deepEqual(
      [...photo.matchAll(/<ColorInterp>(\w+)/g)].map((m) => m[1]),
      ['Red', 'Green', 'Blue', 'Alpha'],
    );
  });
});
