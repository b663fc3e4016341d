/**
 * The catalogue's packed footprints: lossless, and the box tests on them answer exactly as
 * geo/polygon.ts does on the GeoJSON form, on random shapes built to hit the edge rules (grid
 * coordinates so boxes touch edges and vertices; holes; several polygons; rings left unclosed).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  footprintNumbers,
  packedBoxInside,
  packedBoxIntersects,
  packFootprint,
  unpackFootprint,
} from '../../src/catalogue/packed-footprint.js';
import {
  boxInsideMultiPolygon,
  boxIntersectsMultiPolygon,
  type MultiPolygon,
  type Ring,
} from '../../src/geo/polygon.js';
import type { Bounds } from '../../src/geo/web-mercator.js';
import { mulberry32 } from '../geo/helpers.js';
import { box, lFootprint, rectRing } from './helpers.js';

const rand = mulberry32(7);
const int = (n: number) => Math.floor(rand() * n);
const grid = (n: number) => int(n) / 4;

/** A star-ish ring around (cx, cy) on a quarter-unit grid, closed or not. */
function randomRing(cx: number, cy: number, size: number): Ring {
  const n = 3 + int(7);
  const ring: Ring = [];
  for (let k = 0; k < n; k++) {
    const angle = (k / n) * 2 * Math.PI;
    const r = size * (0.4 + rand() * 0.6);
    ring.push([Math.round((cx + Math.cos(angle) * r) * 4) / 4, Math.round((cy + Math.sin(angle) * r) * 4) / 4]);
  }
  if (rand() < 0.7) ring.push([...(ring[0] as [number, number])]);
  return ring;
}

function randomFootprint(): MultiPolygon {
  const roll = rand();
  if (roll < 0.15) return [[rectRing(box(grid(20), grid(20), 5 + grid(20), 5 + grid(20)))]];
  if (roll < 0.25) return lFootprint(box(grid(20), grid(20), 6 + grid(20), 6 + grid(20)));
  const polygons: MultiPolygon = [];
  for (let p = 0, count = 1 + int(3); p < count; p++) {
    const cx = 3 + grid(20);
    const cy = 3 + grid(20);
    const outer = randomRing(cx, cy, 2 + grid(12));
    const holes = rand() < 0.4 ? [randomRing(cx, cy, 0.5 + grid(4))] : [];
    polygons.push([outer, ...holes]);
  }
  return polygons;
}

function randomBox(): Bounds {
  const minX = grid(60);
  const minY = grid(60);
  const w = rand() < 0.3 ? rand() * 0.5 : grid(16) + 0.25;
  const h = rand() < 0.3 ? rand() * 0.5 : grid(16) + 0.25;
  return box(minX, minY, minX + w, minY + h);
}

describe('packed footprints', () => {
  it('unpack(pack(x)) is x, coordinates exact', () => {
    for (let i = 0; i < 200; i++) {
      const footprint = randomFootprint().map((polygon) =>
        polygon.map((ring) => ring.map(([x, y]): [number, number] => [x + rand() * 1e-9, y - rand() / 3])),
      );
      assert.deepEqual(unpackFootprint(packFootprint(footprint)), footprint);
    }
    assert.deepEqual(unpackFootprint(packFootprint([])), []);
    assert.deepEqual(unpackFootprint(packFootprint([[[]]])), [[[]]]);
  });

  it('stores -0 as 0, as the GeoJSON text did', () => {
    const unpacked = unpackFootprint(
      packFootprint([
        [
          [
            [-0, 1],
            [1, -0],
            [0, 0],
          ],
        ],
      ]),
    );
    assert.ok(unpacked[0]?.[0]?.every(([x, y]) => !Object.is(x, -0) && !Object.is(y, -0)));
  });

  it('refuses non-finite coordinates', () => {
    assert.throws(
      () =>
        packFootprint([
          [
            [
              [0, 0],
              [Number.POSITIVE_INFINITY, 1],
              [1, 0],
            ],
          ],
        ]),
      /finite/,
    );
    assert.throws(() => packFootprint([[[[0, Number.NaN]]]]), /finite/);
  });

  it('reads unaligned bytes as well as aligned ones', () => {
    const packed = packFootprint(lFootprint(box(1, 1, 3, 3)));
    const shifted = Buffer.alloc(packed.length + 1);
    packed.copy(shifted, 1);
    const unaligned = shifted.subarray(1);
    assert.deepEqual(unpackFootprint(unaligned), lFootprint(box(1, 1, 3, 3)));
    assert.ok(packedBoxIntersects(box(1.1, 1.1, 1.2, 1.2), footprintNumbers(unaligned)));
  });

  it('box tests agree with geo/polygon.ts on 40,000 random footprint and box pairs', () => {
    let hits = 0;
    let inside = 0;
    for (let i = 0; i < 2000; i++) {
      const footprint = randomFootprint();
      const numbers = footprintNumbers(packFootprint(footprint));
      for (let k = 0; k < 20; k++) {
        const b = randomBox();
        const expectedHit = boxIntersectsMultiPolygon(b, footprint);
        const expectedInside = boxInsideMultiPolygon(b, footprint);
        assert.equal(packedBoxIntersects(b, numbers), expectedHit, `intersects ${JSON.stringify({ b, footprint })}`);
        assert.equal(packedBoxInside(b, numbers), expectedInside, `inside ${JSON.stringify({ b, footprint })}`);
        if (expectedHit) hits++;
        if (expectedInside) inside++;
      }
    }
    // Both answers occur often enough for the agreement to mean something.
    assert.ok(hits > 4000 && hits < 36000, `${hits} intersecting`);
    assert.ok(inside > 1000, `${inside} inside`);
  });
});
