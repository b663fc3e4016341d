import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aoiLonLatBounds, aoiMercatorBounds, MAX_RADIUS, mercatorBoundsToLonLat } from '../../src/geo/aoi.js';
import { haversineMetres } from '../../src/geo/ground.js';
import { lonLatToMercator, mercatorToLonLat } from '../../src/geo/web-mercator.js';
import { approx, approxRel, referenceHaversine } from './helpers.js';

const places = [
  { name: 'equator', lon: 0, lat: 0 },
  { name: 'Bordeaux-ish', lon: -0.58, lat: 44 },
  { name: 'Bali', lon: 115.2, lat: -8.6 },
  { name: 'Helsinki', lon: 24.94, lat: 60 },
  { name: 'near the antimeridian', lon: 179.9, lat: -44 },
];

describe('haversine', () => {
  it('one degree of latitude is about 111.2 km', () => {
    approx(haversineMetres(0, 0, 0, 1), 111_195, 5);
    approx(haversineMetres(10, 45, 10, 46), 111_195, 5);
  });

  it('one degree of longitude shrinks with cos(latitude)', () => {
    approx(haversineMetres(0, 0, 1, 0), 111_195, 5);
    approxRel(haversineMetres(0, 60, 1, 60), 111_195 * 0.5, 1e-4);
  });

  it('is symmetric, zero for one point, and matches the reference formula', () => {
    assert.equal(haversineMetres(12.5, 41.9, 12.5, 41.9), 0);
    const cases: [number, number, number, number][] = [
      [-0.1276, 51.5072, 2.3522, 48.8566], // London - Paris ~ 344 km
      [151.2, -33.86, -118.24, 34.05], // Sydney - Los Angeles
      [0, 0, 180, 0], // half the equator
    ];
    for (const [a, b, c, d] of cases) {
      approxRel(haversineMetres(a, b, c, d), referenceHaversine(a, b, c, d), 1e-9);
      assert.equal(haversineMetres(a, b, c, d), haversineMetres(c, d, a, b));
    }
    approx(haversineMetres(-0.1276, 51.5072, 2.3522, 48.8566) / 1000, 343.5, 1);
    approxRel(haversineMetres(0, 0, 180, 0), Math.PI * 6371008.8, 1e-12);
  });
});

describe('AOI square', () => {
  for (const place of places) {
    for (const radius of [1, 50, MAX_RADIUS]) {
      it(`is 2 x ${radius} ground metres per side at ${place.name} (lat ${place.lat})`, () => {
        const b = aoiLonLatBounds({ lon: place.lon, lat: place.lat, radius });
        const midLat = (b.minY + b.maxY) / 2;
        const midLon = (b.minX + b.maxX) / 2;
        // Edge midpoints: west-east along the centre row, south-north along the centre column.
        const width = referenceHaversine(b.minX, place.lat, b.maxX, place.lat);
        const height = referenceHaversine(place.lon, b.minY, place.lon, b.maxY);
        approxRel(width, 2 * radius, 0.005, 'width');
        approxRel(height, 2 * radius, 0.005, 'height');
        // Centred on the point: the lon midpoint exactly, the lat midpoint to Mercator's tiny asymmetry.
        approx(midLon, place.lon, 1e-9);
        approx(midLat, place.lat, 1e-7);
      });
    }
  }

  it('the Mercator square is 2 x radius / cos(lat) on a side, centred on the point', () => {
    for (const { lon, lat } of places) {
      const b = aoiMercatorBounds({ lon, lat, radius: 80 });
      const side = 160 / Math.cos((lat * Math.PI) / 180);
      approx(b.maxX - b.minX, side, 1e-6);
      approx(b.maxY - b.minY, side, 1e-6);
      const [cx, cy] = lonLatToMercator(lon, lat);
      approx((b.minX + b.maxX) / 2, cx, 1e-6);
      approx((b.minY + b.maxY) / 2, cy, 1e-6);
    }
  });

  it('at 60 degrees the Mercator side is twice the ground side', () => {
    const b = aoiMercatorBounds({ lon: 24.94, lat: 60, radius: 100 });
    approx(b.maxX - b.minX, 400, 1e-6);
  });

  it('lon/lat bounds are the Mercator bounds unprojected, corner for corner', () => {
    for (const { lon, lat } of places) {
      const aoi = { lon, lat, radius: 73 };
      const m = aoiMercatorBounds(aoi);
      const g = aoiLonLatBounds(aoi);
      assert.ok(g.minX < lon && lon < g.maxX && g.minY < lat && lat < g.maxY);
      const [x0, y0] = lonLatToMercator(g.minX, g.minY);
      const [x1, y1] = lonLatToMercator(g.maxX, g.maxY);
      approx(x0, m.minX, 1e-6);
      approx(y0, m.minY, 1e-6);
      approx(x1, m.maxX, 1e-6);
      approx(y1, m.maxY, 1e-6);
    }
  });

  it('mercatorBoundsToLonLat unprojects each corner', () => {
    const b = { minX: -1e6, minY: -2e6, maxX: 3e6, maxY: 4e6 };
    const g = mercatorBoundsToLonLat(b);
    assert.deepEqual([g.minX, g.minY], mercatorToLonLat(b.minX, b.minY));
    assert.deepEqual([g.maxX, g.maxY], mercatorToLonLat(b.maxX, b.maxY));
    assert.ok(g.minX < g.maxX && g.minY < g.maxY);
  });

  it('the side grows linearly with the radius', () => {
    const small = aoiMercatorBounds({ lon: 10, lat: 44, radius: 10 });
    const big = aoiMercatorBounds({ lon: 10, lat: 44, radius: 100 });
    approxRel(big.maxX - big.minX, 10 * (small.maxX - small.minX), 1e-9);
  });
});
