import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  boxInsideMultiPolygon,
  boxIntersectsMultiPolygon,
  type MultiPolygon,
  multiPolygonBounds,
  pointInMultiPolygon,
  pointInPolygon,
  pointInRing,
  type Ring,
  segmentCrossesBoxInterior,
} from '../../src/geo/polygon.js';
import type { Bounds } from '../../src/geo/web-mercator.js';

const box = (minX: number, minY: number, maxX: number, maxY: number): Bounds => ({ minX, minY, maxX, maxY });
const rect = (minX: number, minY: number, maxX: number, maxY: number): Ring => [
  [minX, minY],
  [maxX, minY],
  [maxX, maxY],
  [minX, maxY],
  [minX, minY],
];

// A 10 x 10 square with a 4 x 4 hole in the middle.
const donut: MultiPolygon = [[rect(0, 0, 10, 10), rect(3, 3, 7, 7)]];
// An L: the square [0,10]^2 without its top-right quarter (5,10]^2. The notch is that quarter.
const ell: MultiPolygon = [
  [
    [
      [0, 0],
      [10, 0],
      [10, 5],
      [5, 5],
      [5, 10],
      [0, 10],
      [0, 0],
    ],
  ],
];
// Two squares far apart.
const pair: MultiPolygon = [[rect(0, 0, 2, 2)], [rect(10, 10, 12, 12)]];
// A triangle written without repeating its first vertex (an open ring).
const triangle: MultiPolygon = [
  [
    [
      [0, 0],
      [10, 0],
      [0, 10],
    ],
  ],
];

/** [intersects, inside] for a box. */
const classify = (b: Bounds, mp: MultiPolygon) => [boxIntersectsMultiPolygon(b, mp), boxInsideMultiPolygon(b, mp)];

describe('points', () => {
  it('pointInRing / pointInPolygon respect holes', () => {
    assert.equal(pointInRing(1, 1, rect(0, 0, 10, 10)), true);
    assert.equal(pointInRing(11, 1, rect(0, 0, 10, 10)), false);
    assert.equal(pointInRing(-0.001, 5, rect(0, 0, 10, 10)), false);
    assert.equal(pointInPolygon(1, 1, donut[0]!), true);
    assert.equal(pointInPolygon(5, 5, donut[0]!), false);
    assert.equal(pointInPolygon(8, 5, donut[0]!), true);
    assert.equal(pointInPolygon(5, 5, []), false);
  });

  it('handles concave rings and open rings', () => {
    assert.equal(pointInMultiPolygon(7, 7, ell), false); // in the notch
    assert.equal(pointInMultiPolygon(7, 2, ell), true);
    assert.equal(pointInMultiPolygon(2, 7, ell), true);
    assert.equal(pointInMultiPolygon(2, 2, triangle), true);
    assert.equal(pointInMultiPolygon(6, 6, triangle), false);
    assert.equal(pointInMultiPolygon(11, 11, pair), true);
    assert.equal(pointInMultiPolygon(5, 5, pair), false);
  });

  it('multiPolygonBounds spans the outer rings of every part', () => {
    assert.deepEqual(multiPolygonBounds(pair), box(0, 0, 12, 12));
    assert.deepEqual(multiPolygonBounds(donut), box(0, 0, 10, 10));
    assert.equal(multiPolygonBounds([]).minX, Number.POSITIVE_INFINITY);
  });
});

describe('segmentCrossesBoxInterior', () => {
  const b = box(0, 0, 10, 10);
  it('detects segments through, into, and wholly inside the box', () => {
    assert.equal(segmentCrossesBoxInterior([-5, 5], [15, 5], b), true); // straight through
    assert.equal(segmentCrossesBoxInterior([-5, -5], [15, 15], b), true); // diagonal
    assert.equal(segmentCrossesBoxInterior([5, 5], [20, 20], b), true); // starts inside
    assert.equal(segmentCrossesBoxInterior([2, 2], [3, 3], b), true); // wholly inside
    assert.equal(segmentCrossesBoxInterior([4, 4], [4, 4], b), true); // a point inside
    assert.equal(segmentCrossesBoxInterior([0, 5], [5, 5], b), true); // from an edge inward
  });

  it('ignores segments that miss, touch only the boundary, or stop at it', () => {
    assert.equal(segmentCrossesBoxInterior([-5, 11], [15, 11], b), false); // above
    assert.equal(segmentCrossesBoxInterior([-5, 5], [-1, 5], b), false); // short of it
    assert.equal(segmentCrossesBoxInterior([-5, 5], [0, 5], b), false); // ends on the left edge
    assert.equal(segmentCrossesBoxInterior([-5, 10], [15, 10], b), false); // along the top edge
    assert.equal(segmentCrossesBoxInterior([0, -5], [0, 15], b), false); // along the left edge
    assert.equal(segmentCrossesBoxInterior([2, 0], [8, 0], b), false); // on the bottom edge
    assert.equal(segmentCrossesBoxInterior([-5, 5], [5, -5], b), false); // through a corner only
    assert.equal(segmentCrossesBoxInterior([-1, 12], [12, -1], b), true); // clips a corner
    assert.equal(segmentCrossesBoxInterior([10, 10], [10, 10], b), false); // a corner point
    assert.equal(segmentCrossesBoxInterior([11, 0], [20, 9], b), false); // parallel to the diagonal, outside
  });
});

describe('box vs footprint: [intersects, inside]', () => {
  it('simple cases with a square', () => {
    const sq: MultiPolygon = [[rect(0, 0, 10, 10)]];
    assert.deepEqual(classify(box(2, 2, 4, 4), sq), [true, true], 'fully inside');
    assert.deepEqual(classify(box(20, 20, 30, 30), sq), [false, false], 'fully outside');
    assert.deepEqual(classify(box(11, -5, 12, 15), sq), [false, false], 'outside, overlapping bbox row');
    assert.deepEqual(classify(box(8, 8, 12, 12), sq), [true, false], 'partial');
    assert.deepEqual(classify(box(-5, -5, 15, 15), sq), [true, false], 'box contains the polygon');
    assert.deepEqual(classify(box(-5, 4, 15, 6), sq), [true, false], 'band across it');
  });

  // Decision: boundaries are closed. A box that only touches the footprint (shares an edge or a
  // corner from outside) shares no area, so it does not intersect; a box touching the boundary
  // from inside, or equal to the footprint, is covered by it (overlap=full matches).
  it('touching from outside is no intersection', () => {
    const sq: MultiPolygon = [[rect(0, 0, 10, 10)]];
    assert.deepEqual(classify(box(10, 2, 12, 4), sq), [false, false], 'shares the right edge');
    assert.deepEqual(classify(box(-2, 2, 0, 4), sq), [false, false], 'shares the left edge');
    assert.deepEqual(classify(box(2, 10, 4, 12), sq), [false, false], 'shares the top edge');
    assert.deepEqual(classify(box(10, 10, 12, 12), sq), [false, false], 'shares a corner');
    assert.deepEqual(classify(box(-2, -2, 0, 0), sq), [false, false], 'shares the other corner');
  });

  it('touching from inside, or equal, is covered (on every side alike)', () => {
    const sq: MultiPolygon = [[rect(0, 0, 10, 10)]];
    assert.deepEqual(classify(box(0, 0, 10, 10), sq), [true, true], 'equal');
    assert.deepEqual(classify(box(0, 0, 5, 5), sq), [true, true], 'bottom-left corner');
    assert.deepEqual(classify(box(5, 5, 10, 10), sq), [true, true], 'top-right corner');
    assert.deepEqual(classify(box(8, 2, 10, 4), sq), [true, true], 'right edge');
    assert.deepEqual(classify(box(2, 8, 4, 10), sq), [true, true], 'top edge');
  });

  it('holes', () => {
    assert.deepEqual(classify(box(4, 4, 6, 6), donut), [false, false], 'inside the hole');
    assert.deepEqual(classify(box(3, 3, 7, 7), donut), [false, false], 'exactly the hole');
    assert.deepEqual(classify(box(6, 4, 8, 6), donut), [true, false], 'straddles the hole edge');
    assert.deepEqual(classify(box(7, 4, 9, 6), donut), [true, true], 'beside the hole, touching its edge');
    assert.deepEqual(classify(box(1, 1, 9, 9), donut), [true, false], 'contains the hole');
    assert.deepEqual(classify(box(0.5, 0.5, 2.5, 9.5), donut), [true, true], 'in the ring, left of the hole');
  });

  it('concave L: the notch', () => {
    assert.deepEqual(classify(box(6, 6, 9, 9), ell), [false, false], 'in the notch');
    assert.deepEqual(classify(box(5, 5, 10, 10), ell), [false, false], 'fills the notch, touching both arms');
    assert.deepEqual(classify(box(4, 6, 9, 9), ell), [true, false], 'notch plus some of the upper arm');
    assert.deepEqual(classify(box(6, 4, 9, 9), ell), [true, false], 'notch plus some of the right arm');
    assert.deepEqual(classify(box(1, 6, 4, 9), ell), [true, true], 'inside the upper arm');
    assert.deepEqual(classify(box(0, 5, 5, 10), ell), [true, true], 'the whole upper arm square');
    assert.deepEqual(classify(box(1, 1, 5, 5), ell), [true, true], 'touching the inner corner');
    assert.deepEqual(classify(box(4, 4, 6, 6), ell), [true, false], 'around the inner corner');
    assert.deepEqual(classify(box(0, 0, 10, 10), ell), [true, false], 'the L bbox');
  });

  it('triangle (open ring): the closing edge counts', () => {
    assert.deepEqual(classify(box(1, 1, 3, 3), triangle), [true, true]);
    assert.deepEqual(classify(box(4, 4, 6, 6), triangle), [true, false], 'straddles the hypotenuse');
    assert.deepEqual(classify(box(6, 6, 8, 8), triangle), [false, false], 'beyond the hypotenuse');
    assert.deepEqual(classify(box(-1, 2, 0.5, 3), triangle), [true, false], 'straddles the implicit closing edge');
  });

  it('multipolygons: any part intersects; inside needs one part to hold the whole box', () => {
    assert.deepEqual(classify(box(10.5, 10.5, 11.5, 11.5), pair), [true, true]);
    assert.deepEqual(classify(box(0.5, 0.5, 1.5, 1.5), pair), [true, true]);
    assert.deepEqual(classify(box(4, 4, 8, 8), pair), [false, false], 'between the parts');
    assert.deepEqual(classify(box(1, 1, 11, 11), pair), [true, false], 'spans both');
    assert.deepEqual(classify(box(-1, -1, 13, 13), pair), [true, false], 'contains both');
    assert.deepEqual(classify(box(0, 0, 1, 1), []), [false, false], 'empty multipolygon');
  });
});

describe('box vs footprint against the plain definition', () => {
  // The definition, written the plain way (every edge as a pair, then the centre): the library's
  // loop skips edges wholly beside the box and must answer exactly as this does.
  const edgesOf = (polygon: Ring[]): [Ring[number], Ring[number]][] =>
    polygon.flatMap((ring) => {
      const pairs: [Ring[number], Ring[number]][] = ring.slice(1).map((b, i) => [ring[i] as Ring[number], b]);
      const first = ring[0];
      const last = ring[ring.length - 1];
      if (first && last && (first[0] !== last[0] || first[1] !== last[1])) pairs.push([last, first]);
      return pairs;
    });
  const centreIn = (b: Bounds, polygon: Ring[]) =>
    pointInPolygon((b.minX + b.maxX) / 2, (b.minY + b.maxY) / 2, polygon);
  const intersects = (b: Bounds, mp: MultiPolygon) =>
    mp.some((p) => edgesOf(p).some(([s, e]) => segmentCrossesBoxInterior(s, e, b)) || centreIn(b, p));
  const inside = (b: Bounds, mp: MultiPolygon) =>
    mp.some((p) => !edgesOf(p).some(([s, e]) => segmentCrossesBoxInterior(s, e, b)) && centreIn(b, p));

  it('agrees on 20,000 boxes over ragged polygons with holes, open rings and vertices on the grid', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    // Coordinates on a coarse grid half the time, so boxes often touch edges and vertices exactly.
    const coordinate = (scale: number) => (random() < 0.5 ? Math.round(random() * 8) * (scale / 8) : random() * scale);
    const star = (cx: number, cy: number, radius: number, points: number, closed: boolean): Ring => {
      const ring: Ring = [];
      for (let i = 0; i < points; i++) {
        const angle = (2 * Math.PI * i) / points;
        const r = radius * (0.4 + 0.6 * random());
        ring.push([cx + r * Math.cos(angle), cy + r * Math.sin(angle)]);
      }
      if (closed) ring.push(ring[0] as Ring[number]);
      return ring;
    };
    let agreed = 0;
    let hits = 0;
    for (let n = 0; n < 200; n++) {
      const mp: MultiPolygon = [
        [star(5, 5, 5, 5 + Math.floor(random() * 40), random() < 0.7), star(5, 5, 1.5, 6, true)],
        [star(12, 4, 2, 4 + Math.floor(random() * 10), random() < 0.5)],
      ];
      for (let k = 0; k < 100; k++) {
        const x = coordinate(16);
        const y = coordinate(12);
        const b = box(x, y, x + 0.05 + random() * 4, y + 0.05 + random() * 4);
        assert.deepEqual(classify(b, mp), [intersects(b, mp), inside(b, mp)], `polygon ${n}, box ${JSON.stringify(b)}`);
        if (intersects(b, mp)) hits++;
        agreed++;
      }
    }
    assert.equal(agreed, 20_000);
    assert.ok(hits > 2_000 && hits < 18_000, `a mix of hits and misses (${hits})`);
  });
});
