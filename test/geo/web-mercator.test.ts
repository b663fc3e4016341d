import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  EARTH_RADIUS,
  groundScale,
  isValidTile,
  lonLatToMercator,
  MAX_LATITUDE,
  MAX_ZOOM,
  mercatorToLonLat,
  nearestZoomForResolution,
  ORIGIN_SHIFT,
  resolutionAtZoom,
  tileBounds,
  tileForMercator,
} from '../../src/geo/web-mercator.js';
import { approx, mulberry32 } from './helpers.js';

// Independent forms of the spherical Mercator (not the ones the implementation uses):
// y = R * atanh(sin(phi)) and phi = atan(sinh(y / R)) (the Gudermannian).
const deg = Math.PI / 180;
const mercY = (lat: number) => EARTH_RADIUS * Math.atanh(Math.sin(lat * deg));
const latOfY = (y: number) => Math.atan(Math.sinh(y / EARTH_RADIUS)) / deg;

// The OpenStreetMap wiki's slippy tilename formula.
function osmTile(lon: number, lat: number, z: number): [number, number] {
  const n = 2 ** z;
  const x = Math.floor(((lon + 180) / 360) * n);
  const y = Math.floor(((1 - Math.asinh(Math.tan(lat * deg)) / Math.PI) / 2) * n);
  return [x, y];
}

describe('web mercator constants and known values', () => {
  it('has the well-known EPSG:3857 numbers', () => {
    assert.equal(ORIGIN_SHIFT, 20037508.342789244);
    assert.equal(lonLatToMercator(180, 0)[0], 20037508.342789244);
    assert.equal(lonLatToMercator(-180, 0)[0], -20037508.342789244);
    assert.equal(resolutionAtZoom(0), 156543.03392804097);
    approx(resolutionAtZoom(19), 0.29858214173896974, 1e-15);
    for (let z = 1; z <= MAX_ZOOM; z++) approx(resolutionAtZoom(z) * 2, resolutionAtZoom(z - 1), 1e-9);
  });

  it('maps the square world limit to ORIGIN_SHIFT and clamps latitudes beyond it', () => {
    approx(lonLatToMercator(0, MAX_LATITUDE)[1], ORIGIN_SHIFT, 1e-6);
    approx(lonLatToMercator(0, -MAX_LATITUDE)[1], -ORIGIN_SHIFT, 1e-6);
    approx(latOfY(Math.PI * EARTH_RADIUS), MAX_LATITUDE, 1e-12);
    assert.equal(lonLatToMercator(0, 89.9)[1], lonLatToMercator(0, MAX_LATITUDE)[1]);
    assert.equal(lonLatToMercator(0, -90)[1], lonLatToMercator(0, -MAX_LATITUDE)[1]);
    assert.ok(Number.isFinite(lonLatToMercator(0, 90)[1]));
  });

  it('agrees with the atanh form of the projection', () => {
    for (const lat of [-85, -60, -33.8568, -8.6, 0, 0.001, 44, 51.5072, 60, 85]) {
      for (const lon of [-180, -122.4, 0, 13.4, 179.999]) {
        const [x, y] = lonLatToMercator(lon, lat);
        approx(x, lon * deg * EARTH_RADIUS, 1e-7);
        approx(y, mercY(lat), 1e-6);
      }
    }
  });

  it('agrees with the Gudermannian inverse', () => {
    for (const y of [-ORIGIN_SHIFT, -1e7, -12345.6, 0, 5e6, ORIGIN_SHIFT]) {
      const [lon, lat] = mercatorToLonLat(1e6, y);
      approx(lat, latOfY(y), 1e-11);
      approx(lon, 1e6 / EARTH_RADIUS / deg, 1e-12);
    }
  });
});

describe('lon/lat <-> mercator round trips', () => {
  it('round-trips at the edges of the world', () => {
    const cases: [number, number][] = [
      [180, 0],
      [-180, 0],
      [180, 85.05],
      [-180, -85.05],
      [0, MAX_LATITUDE],
      [0, -MAX_LATITUDE],
      [179.9999999, 85.0511],
      [-179.9999999, -85.0511],
    ];
    for (const [lon, lat] of cases) {
      const [lon2, lat2] = mercatorToLonLat(...lonLatToMercator(lon, lat));
      approx(lon2, lon, 1e-9, `lon of ${lon},${lat}`);
      approx(lat2, lat, 1e-9, `lat of ${lon},${lat}`);
    }
  });

  it('round-trips random points both ways', () => {
    const rand = mulberry32(3857);
    for (let i = 0; i < 2000; i++) {
      const lon = rand() * 360 - 180;
      const lat = (rand() * 2 - 1) * MAX_LATITUDE;
      const [lon2, lat2] = mercatorToLonLat(...lonLatToMercator(lon, lat));
      approx(lon2, lon, 1e-9);
      approx(lat2, lat, 1e-9);
      const x = (rand() * 2 - 1) * ORIGIN_SHIFT;
      const y = (rand() * 2 - 1) * ORIGIN_SHIFT;
      const [x2, y2] = lonLatToMercator(...mercatorToLonLat(x, y));
      approx(x2, x, 1e-6);
      approx(y2, y, 1e-6);
    }
  });
});

describe('tiles', () => {
  it('finds well-known slippy tiles', () => {
    const at = (lon: number, lat: number, z: number) => {
      const t = tileForMercator(...lonLatToMercator(lon, lat), z);
      return [t.x, t.y];
    };
    assert.deepEqual(at(-0.1276, 51.5072, 10), [511, 340]); // London
    assert.deepEqual(at(151.2153, -33.8568, 10), [942, 614]); // Sydney Opera House
    assert.deepEqual(at(0, 0, 0), [0, 0]);
    assert.deepEqual(at(-1, 1, 1), [0, 0]);
    assert.deepEqual(at(1, -1, 1), [1, 1]);
  });

  it('matches the OSM formula for random points and zooms', () => {
    const rand = mulberry32(10);
    for (let i = 0; i < 3000; i++) {
      const lon = rand() * 359.98 - 179.99;
      const lat = (rand() * 2 - 1) * 85;
      const z = Math.floor(rand() * 21);
      const t = tileForMercator(...lonLatToMercator(lon, lat), z);
      assert.deepEqual([t.x, t.y], osmTile(lon, lat, z), `${lon},${lat} z${z}`);
    }
  });

  it('tile bounds have the right size and a tile centre maps back to its tile', () => {
    const rand = mulberry32(99);
    for (let i = 0; i < 1000; i++) {
      const z = Math.floor(rand() * (MAX_ZOOM + 1));
      const n = 2 ** z;
      const x = Math.floor(rand() * n);
      const y = Math.floor(rand() * n);
      const b = tileBounds({ z, x, y });
      approx(b.maxX - b.minX, 256 * resolutionAtZoom(z), 1e-6);
      approx(b.maxY - b.minY, 256 * resolutionAtZoom(z), 1e-6);
      assert.deepEqual(tileForMercator((b.minX + b.maxX) / 2, (b.minY + b.maxY) / 2, z), { z, x, y });
    }
  });

  it('the whole world is tile 0/0/0 and tiles tile the world edge to edge', () => {
    assert.deepEqual(tileBounds({ z: 0, x: 0, y: 0 }), {
      minX: -ORIGIN_SHIFT,
      minY: -ORIGIN_SHIFT,
      maxX: ORIGIN_SHIFT,
      maxY: ORIGIN_SHIFT,
    });
    const a = tileBounds({ z: 5, x: 7, y: 11 });
    // Shared edges agree to float noise (minY is maxY - size, so not always bit-identical).
    approx(a.maxX, tileBounds({ z: 5, x: 8, y: 11 }).minX, 1e-8);
    approx(a.minY, tileBounds({ z: 5, x: 7, y: 12 }).maxY, 1e-8);
    approx(tileBounds({ z: 5, x: 31, y: 31 }).maxX, ORIGIN_SHIFT, 1e-6);
    approx(tileBounds({ z: 5, x: 31, y: 31 }).minY, -ORIGIN_SHIFT, 1e-6);
  });

  it('an edge belongs to the tile right of / below it; the world edge clamps', () => {
    assert.deepEqual(tileForMercator(0, 0, 1), { z: 1, x: 1, y: 1 });
    const b = tileBounds({ z: 3, x: 2, y: 5 });
    assert.deepEqual(tileForMercator(b.minX, b.maxY, 3), { z: 3, x: 2, y: 5 });
    assert.deepEqual(tileForMercator(-ORIGIN_SHIFT, ORIGIN_SHIFT, 4), { z: 4, x: 0, y: 0 });
    assert.deepEqual(tileForMercator(ORIGIN_SHIFT, -ORIGIN_SHIFT, 4), { z: 4, x: 15, y: 15 });
    assert.deepEqual(tileForMercator(3 * ORIGIN_SHIFT, -3 * ORIGIN_SHIFT, 4), { z: 4, x: 15, y: 15 });
    assert.deepEqual(tileForMercator(-3 * ORIGIN_SHIFT, 3 * ORIGIN_SHIFT, 4), { z: 4, x: 0, y: 0 });
  });

  it('isValidTile accepts z 0..24 with x/y in 0..2^z-1 and nothing else', () => {
    assert.equal(isValidTile({ z: 0, x: 0, y: 0 }), true);
    assert.equal(isValidTile({ z: 10, x: 1023, y: 1023 }), true);
    assert.equal(isValidTile({ z: 24, x: 2 ** 24 - 1, y: 0 }), true);
    const bad = [
      { z: 0, x: 1, y: 0 },
      { z: 0, x: 0, y: 1 },
      { z: 10, x: 1024, y: 0 },
      { z: 10, x: 0, y: 1024 },
      { z: 10, x: -1, y: 0 },
      { z: 10, x: 0, y: -1 },
      { z: -1, x: 0, y: 0 },
      { z: 25, x: 0, y: 0 },
      { z: 1.5, x: 0, y: 0 },
      { z: 3, x: 0.5, y: 0 },
      { z: 3, x: 0, y: 2.000001 },
      { z: Number.NaN, x: 0, y: 0 },
      { z: 3, x: Number.POSITIVE_INFINITY, y: 0 },
    ];
    for (const t of bad) assert.equal(isValidTile(t), false, JSON.stringify(t));
  });
});

describe('resolution and scale', () => {
  it('nearestZoomForResolution picks the nearest zoom in log2 and clamps', () => {
    for (let z = 0; z <= MAX_ZOOM; z++) {
      assert.equal(nearestZoomForResolution(resolutionAtZoom(z)), z);
      if (z < MAX_ZOOM) {
        // The log-midpoint between z and z+1 is resolutionAtZoom(z) / sqrt(2).
        assert.equal(nearestZoomForResolution(resolutionAtZoom(z) / 2 ** 0.49), z);
        assert.equal(nearestZoomForResolution(resolutionAtZoom(z) / 2 ** 0.51), z + 1);
      }
    }
    assert.equal(nearestZoomForResolution(0.075), 21); // 7.5 cm imagery
    assert.equal(nearestZoomForResolution(0.3), 19);
    assert.equal(nearestZoomForResolution(1e9), 0);
    assert.equal(nearestZoomForResolution(1e-9), MAX_ZOOM);
  });

  it('groundScale is cos(latitude)', () => {
    assert.equal(groundScale(0), 1);
    approx(groundScale(60), 0.5, 1e-15);
    approx(groundScale(-60), 0.5, 1e-15);
    approx(groundScale(45), Math.SQRT1_2, 1e-15);
    // It is the inverse of the local Mercator scale: dy/dlat in metres = R / cos(lat).
    const lat = 44;
    const dy = mercY(lat + 1e-6) - mercY(lat - 1e-6);
    const groundDy = EARTH_RADIUS * 2e-6 * deg;
    approx(groundDy / dy, groundScale(lat), 1e-8);
  });
});
