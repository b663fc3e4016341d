/** The demo town's building blocks: projection, landmarks, survey footprints and ageing. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clipToBox, maskRow, pointInPolygon } from '../src/footprint.js';
import { lonLatToLocal } from '../src/geo.js';
import { DEMO_LANDMARKS, DEMO_SURVEYS, lonLatToUtm, utmToLonLat } from '../src/index.js';
import { contentForSurvey } from '../src/scene-objects.js';
import { type Building, GridStorage, type Tree } from '../src/scene-types.js';
import { destroyedHouses } from '../src/storm-damage.js';
import { Terrain } from '../src/terrain.js';
import { planTown } from '../src/town-plan.js';
import { lonLatToUtmWithGdal } from './raster-probe.js';

describe('UTM 16N projection', () => {
  it('agrees with GDAL to the millimetre and round-trips', () => {
    for (const [lon, lat] of [
      [-85.418, 29.9465],
      [-85.43, 29.94],
      [-87.9, 31.2],
      [-84.1, 25.0],
    ] as const) {
      const [e, n] = lonLatToUtm(lon, lat);
      const [ge, gn] = lonLatToUtmWithGdal(lon, lat);
      assert.ok(Math.abs(e - ge) < 0.001 && Math.abs(n - gn) < 0.001, `${lon},${lat}: ${e},${n} vs ${ge},${gn}`);
      const [lon2, lat2] = utmToLonLat(e, n);
      // 1e-8 degrees is about a millimetre.
      assert.ok(Math.abs(lon2 - lon) < 1e-8 && Math.abs(lat2 - lat) < 1e-8);
    }
  });
});

describe('landmarks and footprints', () => {
  const survey = (name: string) => DEMO_SURVEYS.find((s) => s.name === name)!;

  it('puts each landmark inside every survey from the one it first appears in', () => {
    for (const landmark of DEMO_LANDMARKS) {
      const [x, y] = lonLatToLocal(landmark.lon, landmark.lat);
      const showing = DEMO_SURVEYS.filter(
        (s) => s.captureDate >= landmark.firstSurveyDate && pointInPolygon(s.footprint, x, y),
      );
      assert.ok(
        showing.some((s) => s.captureDate === landmark.firstSurveyDate),
        `${landmark.id} in its first survey`,
      );
    }
    for (const id of ['red-roof-store', 'church-steeple']) {
      const landmark = DEMO_LANDMARKS.find((l) => l.id === id)!;
      const [x, y] = lonLatToLocal(landmark.lon, landmark.lat);
      for (const s of DEMO_SURVEYS) assert.ok(pointInPolygon(s.footprint, x, y), `${id} in ${s.name}`);
    }
  });

  it('gives the surveys overlapping, different footprints, one of them not a rectangle', () => {
    const areas = DEMO_SURVEYS.map((s) =>
      Math.abs(
        s.footprint.reduce((sum, [x1, y1], k) => {
          const [x2, y2] = s.footprint[(k + 1) % s.footprint.length]!;
          return sum + (x1 * y2 - x2 * y1) / 2;
        }, 0),
      ),
    );
    assert.ok(areas[1]! > areas[0]! && areas[1]! > areas[2]!, 'the 2025-04-02 flight is the widest');
    assert.ok(DEMO_SURVEYS.some((s) => s.footprint.length !== 4));
    assert.ok(
      pointInPolygon(survey('2024-03-14').footprint, -280, 0) &&
        !pointInPolygon(survey('2025-10-20').footprint, -280, 0),
    );
    assert.ok(
      pointInPolygon(survey('2025-10-20').footprint, 300, 0) && !pointInPolygon(survey('2024-03-14').footprint, 300, 0),
    );
  });

  it('rasterises footprints by pixel centre and clips them to a box', () => {
    const square: [number, number][] = [
      [0, 0],
      [10, 0],
      [10, 10],
      [0, 10],
    ];
    const mask = new Uint8Array(20);
    maskRow(square, 5, -5, 1, mask);
    assert.deepEqual([...mask], [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]);
    const clipped = clipToBox(square, { minX: 5, minY: -5, maxX: 20, maxY: 5 });
    assert.ok(clipped.every(([x, y]) => x >= 5 && x <= 10 && y >= 0 && y <= 5));
    assert.ok(pointInPolygon(clipped, 7, 2) && !pointInPolygon(clipped, 3, 2));
  });
});

describe('the town through time', () => {
  const terrain = new Terrain(42);
  const plan = planTown(42, terrain);
  const [s2024, s2025, sStorm] = DEMO_SURVEYS as [
    (typeof DEMO_SURVEYS)[0],
    (typeof DEMO_SURVEYS)[0],
    (typeof DEMO_SURVEYS)[0],
  ];
  const at = (survey: typeof s2024) => contentForSurvey(plan, survey, 42);
  const buildings = (survey: typeof s2024) => at(survey).objects.filter((o): o is Building => o.kind === 'building');
  const trees = (survey: typeof s2024) => at(survey).objects.filter((o): o is Tree => o.kind === 'tree');

  it('opens the red-roof store between the 2024 and 2025 surveys', () => {
    const red = (b: Building) => b.roofColor[0] > 150 && b.roofColor[1] < 60;
    assert.equal(buildings(s2024).filter(red).length, 0);
    assert.equal(buildings(s2025).filter(red).length, 1);
  });

  it('grows the trees between surveys', () => {
    const before = new Map(trees(s2024).map((t) => [`${t.x},${t.y}`, t]));
    let compared = 0;
    for (const tree of trees(s2025)) {
      const earlier = before.get(`${tree.x},${tree.y}`);
      if (!earlier) continue;
      assert.ok(tree.radius > earlier.radius && tree.topZ > earlier.topZ);
      compared++;
    }
    assert.ok(compared > 500, `${compared} trees compared`);
  });

  it('damages roofs and fells trees only in the hurricane survey', () => {
    const damaged = (survey: typeof s2024) => buildings(survey).filter((b) => b.damage).length;
    const felled = (survey: typeof s2024) => trees(survey).filter((t) => t.fallenAngle !== undefined).length;
    assert.equal(damaged(s2025), 0);
    assert.equal(felled(s2025), 0);
    assert.ok(damaged(sStorm) > 100, `${damaged(sStorm)} damaged roofs`);
    assert.ok(felled(sStorm) > 100, `${felled(sStorm)} felled trees`);
    assert.ok(buildings(sStorm).filter((b) => b.damage?.tarps.length).length > 30);
    assert.ok(at(sStorm).decals.filter((d) => d.pattern === 'debris').length > 500);
  });

  it('lists as destroyed exactly the houses standing before the storm and gone after it', () => {
    const where = (b: { x: number; y: number }) => `${b.x},${b.y}`;
    const standing = new Set(buildings(s2025).map(where));
    const after = new Set(buildings(sStorm).map(where));
    const gone = [...standing].filter((place) => !after.has(place));
    const listed = destroyedHouses(42, s2025, sStorm).map(where);
    assert.ok(listed.length > 5, `${listed.length} destroyed houses`);
    assert.deepEqual([...listed].sort(), gone.sort());
    assert.deepEqual(destroyedHouses(42, s2024, s2025), []);
  });
});

describe('scene grid storage', () => {
  it('allocates the backing arrays once when made for the largest grid, whatever the order', () => {
    const storage = new GridStorage(12 * 10);
    const small = storage.allocate(0, 0, 0.15, 6, 5);
    const smallColumns = storage.columnMajor(6 * 5);
    const large = storage.allocate(0, 0, 0.15, 12, 10);
    const largeColumns = storage.columnMajor(12 * 10);
    // A second set for the larger grid would stay alive beside the first until every thread that
    // saw the first collected it (docs/demo.md, the generator's memory).
    for (const key of ['heights', 'colors', 'objectIds', 'undersides'] as const)
      assert.equal(large[key].buffer, small[key].buffer, key);
    for (const key of ['heights', 'colors', 'undersides'] as const)
      assert.equal(largeColumns[key].buffer, smallColumns[key].buffer, `columns ${key}`);
    assert.equal(large.heights.length, 120);
    assert.equal(large.objectIds.every((id) => id === 0) && large.undersides.every((u) => u === -Infinity), true);
  });
});
