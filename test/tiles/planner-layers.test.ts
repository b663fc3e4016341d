import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MultiPolygon, Ring } from '../../src/geo/polygon.js';
import { mercatorToLonLat } from '../../src/geo/web-mercator.js';
import { type PlannableAsset, planTile, type TileCandidate, tileEtagSeed } from '../../src/tiles/planner.js';
import { assetAt, candidate, mapTile } from './helpers.js';

// Around Madison, WI: a 1024 px z18 asset whose corner is z16 tile (16493, 23970), i.e. z18 tiles
// 65972..65975 x 95880..95883.
const X18 = 65972;
const Y18 = 95880;
const base = assetAt(16, 18, 16493, 23970, 1024, 1024);

/** A footprint polygon from vertices in z18 tile units relative to the asset's corner. */
function footprint(...rings: [number, number][][]): MultiPolygon {
  const corner = mapTile(18, X18, Y18);
  const span = corner.maxX - corner.minX;
  return [
    rings.map((ring) => ring.map(([i, j]) => mercatorToLonLat(corner.minX + i * span, corner.maxY - j * span)) as Ring),
  ];
}

const square = (i0: number, j0: number, i1: number, j1: number): [number, number][] => [
  [i0, j0],
  [i1, j0],
  [i1, j1],
  [i0, j1],
  [i0, j0],
];

describe('planTile with several candidates', () => {
  interface WithUri extends TileCandidate {
    uri: string;
  }
  const make = (surveyId: string, asset: PlannableAsset, version = 1): WithUri => ({
    surveyId,
    version,
    asset,
    uri: `file:///data/surveys/${surveyId}/v${version}/Vert.tif`,
  });
  const tile = { z: 18, x: X18 + 1, y: Y18 + 1 };
  const a = make('a', base, 3);
  const b = make('b', assetAt(16, 18, 16500, 23970, 1024, 1024)); // elsewhere
  const c = make('c', assetAt(15, 17, 8246, 11985, 1024, 1024)); // native z17: above its max zoom
  const d = make('d', assetAt(18, 20, X18 + 1, Y18 + 1, 1024, 1024)); // z20, one z18 tile at its coarsest
  const e = make('e', assetAt(19, 21, 2 * (X18 + 1), 2 * (Y18 + 1), 2048, 2048)); // minZoom 19: shrunk x2

  it('keeps the caller order and says why the others are skipped', () => {
    const plan = planTile(tile, [a, b, c, d, e]);
    assert.deepEqual(
      plan.layers.map((layer) => [layer.candidate.surveyId, layer.candidateIndex, layer.level, layer.scale]),
      [
        ['a', 0, 0, 1],
        ['d', 3, 2, 1],
        ['e', 4, 2, 2],
      ],
    );
    assert.deepEqual(plan.skipped, [
      { surveyId: 'b', candidateIndex: 1, reason: 'outside-asset' },
      { surveyId: 'c', candidateIndex: 2, reason: 'above-max-zoom' },
    ]);
    // The candidates come back as given, extra fields and all.
    assert.equal(plan.layers[1]?.candidate, d);
    assert.equal(plan.layers[1]?.candidate.uri, 'file:///data/surveys/d/v1/Vert.tif');
    assert.deepEqual(
      plan.layers.map((layer) => layer.passThrough),
      [true, true, false],
    );
    assert.deepEqual(
      plan.layers[2]?.reads.map((read) => [read.col, read.row, read.target]),
      [
        [0, 0, { x: 0, y: 0, width: 128, height: 128 }],
        [1, 0, { x: 128, y: 0, width: 128, height: 128 }],
        [0, 1, { x: 0, y: 128, width: 128, height: 128 }],
        [1, 1, { x: 128, y: 128, width: 128, height: 128 }],
      ],
    );
    const reversed = planTile(tile, [e, d, c, b, a]);
    assert.deepEqual(
      reversed.layers.map((layer) => layer.candidate.surveyId),
      ['e', 'd', 'a'],
    );
  });

  it('no candidates, or none that can contribute: an empty plan (404 without I/O)', () => {
    assert.deepEqual(planTile(tile, []), { tile, layers: [], skipped: [] });
    assert.deepEqual(planTile(tile, [b, c]).layers, []);
  });
});

describe('planTile footprints', () => {
  // An L: the asset's 4 x 4 z18 tiles minus the top-right 2 x 2.
  const lShape = footprint([
    [0, 0],
    [2, 0],
    [2, 2],
    [4, 2],
    [4, 4],
    [0, 4],
    [0, 0],
  ]);
  const withL = { ...candidate('l', base), footprint: lShape };
  const at = (z: number, i: number, j: number) => {
    const shift = 18 - z;
    return planTile({ z, x: (X18 >> shift) + i, y: (Y18 >> shift) + j }, [withL]);
  };

  it('coversTile where the L contains the tile, not in its notch; far inside the notch: skipped', () => {
    for (let i = 0; i < 4; i++) {
      for (let j = 0; j < 4; j++) {
        const plan = at(18, i, j);
        const inNotch = i >= 2 && j < 2;
        if (i === 3 && j === 0) {
          // A whole tile away from the L: nothing there.
          assert.deepEqual(plan.layers, []);
          assert.deepEqual(plan.skipped, [{ surveyId: 'l', candidateIndex: 0, reason: 'outside-footprint' }]);
          continue;
        }
        // Notch tiles touching the L are still drawn: the mask may reach past the traced footprint.
        const layer = plan.layers[0];
        assert.ok(layer, `tile ${i},${j} drawn`);
        assert.equal(layer.coversTile, !inNotch, `tile ${i},${j} coversTile`);
        assert.equal(layer.passThrough, true);
      }
    }
    // z17: the notch is exactly the top-right tile; the other three are inside the L.
    assert.deepEqual(
      [at(17, 0, 0), at(17, 1, 0), at(17, 0, 1), at(17, 1, 1)].map((plan) => plan.layers[0]?.coversTile),
      [true, false, true, true],
    );
    // z16 and below: the tile is bigger than the L.
    assert.equal(at(16, 0, 0).layers[0]?.coversTile, false);
    assert.equal(at(15, 0, 0).layers[0]?.coversTile, false);
  });

  it('a footprint containing the tile only counts where the asset also covers it', () => {
    const everywhere = { ...candidate('w', base), footprint: footprint(square(-100, -100, 100, 100)) };
    assert.equal(planTile({ z: 18, x: X18 + 2, y: Y18 + 3 }, [everywhere]).layers[0]?.coversTile, true);
    assert.equal(planTile({ z: 16, x: X18 >> 2, y: Y18 >> 2 }, [everywhere]).layers[0]?.coversTile, true);
    // z15: the tile is 2 x 2 z16 tiles and the asset only one of them.
    assert.equal(planTile({ z: 15, x: X18 >> 3, y: Y18 >> 3 }, [everywhere]).layers[0]?.coversTile, false);
    // No footprint: never coversTile (an asset's extent is padded to whole tiles).
    assert.equal(planTile({ z: 18, x: X18 + 2, y: Y18 + 3 }, [candidate('n', base)]).layers[0]?.coversTile, false);
  });

  it('an interior box known to be inside the footprint gives the same plans as the polygon tests', () => {
    // The L's lower-left 2 x 2 z18 tiles as a lon/lat box: inside the L.
    const a = mapTile(18, X18, Y18 + 2);
    const b = mapTile(18, X18 + 1, Y18 + 3);
    const [minX, minY] = mercatorToLonLat(a.minX, b.minY);
    const [maxX, maxY] = mercatorToLonLat(b.maxX, a.maxY);
    const withInterior = { ...withL, interior: { minX, minY, maxX, maxY } };
    for (const z of [15, 16, 17, 18]) {
      const shift = 18 - z;
      for (let i = 0; i < 4; i++) {
        for (let j = 0; j < 4; j++) {
          const tile = { z, x: (X18 >> shift) + i, y: (Y18 >> shift) + j };
          assert.deepEqual(
            planTile(tile, [withInterior]).layers.map((l) => [l.coversTile, l.passThrough, l.reads]),
            planTile(tile, [withL]).layers.map((l) => [l.coversTile, l.passThrough, l.reads]),
            `${z}/${i}/${j}`,
          );
        }
      }
    }
  });

  it('keeps tiles within the footprint margin (a few pixels), drops those beyond it', () => {
    const px = 1 / 256; // one z18 pixel in tile units
    const near = { ...candidate('near', base), footprint: footprint(square(0, 0, 3 - 2 * px, 4)) };
    const far = { ...candidate('far', base), footprint: footprint(square(0, 0, 3 - 8 * px, 4)) };
    for (let j = 0; j < 4; j++) {
      const tile = { z: 18, x: X18 + 3, y: Y18 + j };
      assert.equal(planTile(tile, [near]).layers[0]?.coversTile, false, `near ${j}`);
      assert.equal(planTile(tile, [far]).skipped[0]?.reason, 'outside-footprint', `far ${j}`);
      assert.equal(planTile({ ...tile, x: X18 + 1 }, [far]).layers[0]?.coversTile, true, `inside ${j}`);
    }
  });

  it('a footprint with a hole: tiles in the hole are skipped, around it drawn', () => {
    const ring = { ...candidate('ring', base), footprint: footprint(square(-4, -4, 8, 8), square(1, 1, 3, 3)) };
    // The hole is 2 x 2 tiles; each of its tiles touches the footprint, so all are drawn, none covered.
    for (const [i, j] of [
      [1, 1],
      [2, 2],
    ]) {
      assert.equal(planTile({ z: 18, x: X18 + i!, y: Y18 + j! }, [ring]).layers[0]?.coversTile, false);
    }
    assert.equal(planTile({ z: 18, x: X18, y: Y18 }, [ring]).layers[0]?.coversTile, true);
    const wide = { ...candidate('wide', base), footprint: footprint(square(-4, -4, 8, 8), square(0.5, 0.5, 3.5, 3.5)) };
    assert.equal(planTile({ z: 18, x: X18 + 1, y: Y18 + 1 }, [wide]).skipped[0]?.reason, 'outside-footprint');
  });
});

describe('tileEtagSeed', () => {
  const tile = { z: 18, x: X18 + 1, y: Y18 + 1 };
  const one = candidate('one', base, 4);
  const two = candidate('two', assetAt(18, 20, X18 + 1, Y18 + 1, 1024, 1024), 9);
  const elsewhere = candidate('elsewhere', assetAt(16, 18, 16500, 23970, 1024, 1024), 1);
  const seed = (...candidates: TileCandidate[]) => tileEtagSeed(planTile(tile, candidates));

  it('is stable for the same surveys, versions and levels', () => {
    assert.equal(seed(one, two), seed({ ...one }, { ...two }));
    assert.equal(typeof seed(one, two), 'string');
  });

  it('changes with a version, with the layer order and with the level', () => {
    const base1 = seed(one, two);
    assert.notEqual(seed({ ...one, version: 5 }, two), base1);
    assert.notEqual(seed(one, { ...two, version: 10 }), base1);
    assert.notEqual(seed(two, one), base1);
    assert.notEqual(seed(one), base1);
    const parent = { z: 17, x: tile.x >> 1, y: tile.y >> 1 };
    assert.notEqual(tileEtagSeed(planTile(parent, [one])), seed(one), 'level 1 vs level 0');
  });

  it('ignores candidates that cannot contribute', () => {
    assert.equal(seed(one, elsewhere, two), seed(one, two));
    assert.equal(seed(elsewhere), seed());
  });

  it('cannot be forged by survey ids with separators in them', () => {
    const tricky = (id: string, version: number) => ({ ...one, surveyId: id, version });
    assert.notEqual(seed(tricky('a",1,0],["b', 1)), seed(tricky('a', 1), tricky('b', 1)));
    assert.notEqual(seed(tricky('a|1', 1)), seed(tricky('a', 11)));
  });
});
