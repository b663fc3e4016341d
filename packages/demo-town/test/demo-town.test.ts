/**
 * The demo town, generated once (clipped to the middle of town to keep the run short) and
 * checked through GDAL the way nadir's ingest and a person would see it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import gdal from 'gdal-async';
import {
  DEMO_GSD,
  DEMO_LANDMARKS,
  DEMO_LOCATION,
  DEMO_TOWN_ORIGIN_UTM,
  type DemoSurveyOutput,
  generateDemoTown,
} from '../src/index.js';
import { centroidOf, lonLatToUtmWithGdal, openRaster, type Raster, valuesAt } from './raster-probe.js';

/**
 * Metres east/north of the town centre: the church with room for the spire's lean, the store,
 * and the inner corner of the 2024 L (at -60, 60).
 */
const CLIP = { minX: -95, minY: -105, maxX: 45, maxY: 90 };
const ASSETS = ['TrueOrtho', 'DetailDsm', 'Vert', 'North', 'South', 'East', 'West'] as const;

let outDir = '';
let outputs: DemoSurveyOutput[] = [];

function landmark(id: string): { easting: number; northing: number; heightAboveGround: number } {
  const found = DEMO_LANDMARKS.find((l) => l.id === id);
  assert.ok(found, `landmark ${id}`);
  const [easting, northing] = lonLatToUtmWithGdal(found.lon, found.lat);
  return { easting, northing, heightAboveGround: found.heightAboveGround };
}

function local(x: number, y: number): [number, number] {
  return [DEMO_TOWN_ORIGIN_UTM.easting + x, DEMO_TOWN_ORIGIN_UTM.northing + y];
}

function raster(survey: string, asset: string): Raster {
  return openRaster(join(outDir, survey, `${asset}.tif`));
}

/** The copper-green of the spire, lit or in shade (green roofs, trees, pools and tarps are other hues). */
const isSpire = (r: number, g: number, b: number, a: number) =>
  a === 255 && g > 1.8 * r && b > 1.4 * r && g > b && g > 50;
/** Bright red roof. */
const isRed = (r: number, g: number, b: number) => r > 140 && g < 70 && b < 70;

before(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'nadir-demo-'));
  outputs = await generateDemoTown({ outDir, seed: 42, clip: CLIP });
});

after(async () => {
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe('demo town surveys', () => {
  it('writes three surveys with manifests in the agreed format', async () => {
    assert.deepEqual(
      outputs.map((o) => o.captureDate),
      ['2024-03-14', '2025-04-02', '2025-10-20'],
    );
    const local = new Intl.DateTimeFormat('en-CA', {
      timeZone: DEMO_LOCATION.timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
    for (const output of outputs) {
      const manifest = JSON.parse(await readFile(output.manifestPath, 'utf8'));
      assert.deepEqual(Object.keys(manifest).sort(), [
        'assets',
        'captureDate',
        'firstPhotoTime',
        'id',
        'lastPhotoTime',
        'tags',
        'timezone',
      ]);
      assert.equal(manifest.id, output.id);
      assert.match(manifest.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(manifest.timezone, 'America/Chicago');
      assert.deepEqual(manifest.assets, Object.fromEntries(ASSETS.map((a) => [a, `${a}.tif`])));
      const first = new Date(manifest.firstPhotoTime);
      const last = new Date(manifest.lastPhotoTime);
      assert.ok(first < last);
      // captureDate is the local date of the flight, which was in the morning.
      assert.equal(local.format(first), manifest.captureDate);
      const hour = Number(
        new Intl.DateTimeFormat('en-US', { timeZone: 'America/Chicago', hour: 'numeric', hourCycle: 'h23' }).format(
          first,
        ),
      );
      assert.ok(hour >= 7 && hour < 12, `morning flight, got ${hour}h`);
    }
    const tags = await Promise.all(outputs.map(async (o) => JSON.parse(await readFile(o.manifestPath, 'utf8')).tags));
    assert.deepEqual(tags, [[], [], ['disaster:hurricane']]);
  });

  it('stores every product north-up in EPSG:32616 at its own GSD, snapped to it', async () => {
    for (const output of outputs) {
      for (const asset of ASSETS) {
        const r = raster(output.name, asset);
        const [x0, dx, rx, y0, ry, dy] = r.geoTransform as [number, number, number, number, number, number];
        assert.equal(dx, DEMO_GSD[asset]);
        assert.equal(dy, -DEMO_GSD[asset]);
        assert.equal(rx, 0);
        assert.equal(ry, 0);
        for (const origin of [x0, y0])
          assert.ok(Math.abs(origin / dx - Math.round(origin / dx)) < 1e-6, `${asset} origin ${origin}`);
        assert.equal(r.dataset.srs?.getAuthorityCode(null), '32616');
        if (asset === 'DetailDsm') {
          assert.equal(r.dataset.bands.count(), 1);
          assert.equal(r.dataset.bands.get(1).dataType, gdal.GDT_Float32);
          assert.equal(r.dataset.bands.get(1).noDataValue, -9999);
        } else {
          assert.equal(r.dataset.bands.count(), 4);
          assert.equal(r.dataset.bands.get(1).dataType, gdal.GDT_Byte);
          assert.equal(r.dataset.bands.get(4).colorInterpretation, gdal.GCI_AlphaBand);
        }
        r.dataset.close();
      }
    }
  });

  it('marks the footprint with alpha and nodata: the 2024 survey is an L with the north-east quarter missing', async () => {
    const inside = local(-75, 75);
    const notch = local(-45, 75);
    for (const asset of ['TrueOrtho', 'Vert', 'North', 'East']) {
      const r = raster('2024-03-14', asset);
      assert.equal(valuesAt(r, ...inside)?.[3], 255, `${asset} inside`);
      assert.deepEqual(valuesAt(r, ...notch), [0, 0, 0, 0], `${asset} in the notch`);
      r.dataset.close();
    }
    const dsm = raster('2024-03-14', 'DetailDsm');
    assert.equal(valuesAt(dsm, ...notch)?.[0], -9999);
    assert.ok((valuesAt(dsm, ...inside)?.[0] ?? -9999) > 0);
    dsm.dataset.close();
  });

  it('has the steeple tower far above the ground beside it in the DSM', async () => {
    const steeple = landmark('church-steeple');
    for (const output of outputs) {
      const dsm = raster(output.name, 'DetailDsm');
      const top = valuesAt(dsm, steeple.easting, steeple.northing)?.[0] ?? Number.NaN;
      const beside = valuesAt(dsm, steeple.easting, steeple.northing - 12)?.[0] ?? Number.NaN;
      assert.ok(top - beside > steeple.heightAboveGround - 4, `${output.name}: spire ${top} m, ground ${beside} m`);
      dsm.dataset.close();
    }
  });

  it('builds the red-roof store between the 2024 and 2025 surveys', async () => {
    const store = landmark('red-roof-store');
    const colorIn = (survey: string) => {
      const r = raster(survey, 'TrueOrtho');
      const values = valuesAt(r, store.easting, store.northing) ?? [];
      r.dataset.close();
      return values as [number, number, number, number];
    };
    const before2024 = colorIn('2024-03-14');
    assert.equal(before2024[3], 255);
    assert.ok(!isRed(...(before2024.slice(0, 3) as [number, number, number])), `2024: ${before2024}`);
    for (const survey of ['2025-04-02', '2025-10-20']) {
      const [r, g, b] = colorIn(survey);
      assert.ok(isRed(r, g, b), `${survey}: ${[r, g, b]}`);
    }
    const dsm = raster('2025-04-02', 'DetailDsm');
    const roof = valuesAt(dsm, store.easting, store.northing)?.[0] ?? 0;
    const dsm2024 = raster('2024-03-14', 'DetailDsm');
    const lot = valuesAt(dsm2024, store.easting, store.northing)?.[0] ?? 0;
    assert.ok(Math.abs(roof - lot - store.heightAboveGround) < 1.5, `roof ${roof} over lot ${lot}`);
    dsm.dataset.close();
    dsm2024.dataset.close();
  });

  it('leans the spire away from the camera in every panorama, and not at all in the true ortho', async () => {
    const steeple = landmark('church-steeple');
    const base: [number, number] = [steeple.easting, steeple.northing];
    const expected: Record<string, [number, number]> = { North: [0, 1], South: [0, -1], East: [1, 0], West: [-1, 0] };
    for (const survey of ['2024-03-14', '2025-10-20']) {
      for (const [direction, [ex, ny]] of Object.entries(expected)) {
        const r = raster(survey, direction);
        const spire = centroidOf(r, base, 45, isSpire);
        r.dataset.close();
        assert.ok(spire.count > 50, `${survey} ${direction}: ${spire.count} spire pixels`);
        const along = (spire.easting - base[0]) * ex + (spire.northing - base[1]) * ny;
        const across = (spire.easting - base[0]) * ny - (spire.northing - base[1]) * ex;
        assert.ok(along > 12 && along < 34, `${survey} ${direction}: spire ${along.toFixed(1)} m along the view`);
        assert.ok(Math.abs(across) < 3, `${survey} ${direction}: spire ${across.toFixed(1)} m sideways`);
      }
      const ortho = raster(survey, 'TrueOrtho');
      const top = centroidOf(ortho, base, 20, isSpire);
      ortho.dataset.close();
      assert.ok(top.count > 50);
      assert.ok(
        Math.hypot(top.easting - base[0], top.northing - base[1]) < 1,
        'true ortho: spire straight over its base',
      );
    }
  });

  it('leans the spire away from the nearest photo centre in the Vert mosaic', async () => {
    const steeple = landmark('church-steeple');
    const base: [number, number] = [steeple.easting, steeple.northing];
    const vert = raster('2025-04-02', 'Vert');
    const ortho = raster('2025-04-02', 'TrueOrtho');
    const leaning = centroidOf(vert, base, 20, isSpire);
    const upright = centroidOf(ortho, base, 20, isSpire);
    vert.dataset.close();
    ortho.dataset.close();
    const shift = Math.hypot(leaning.easting - upright.easting, leaning.northing - upright.northing);
    assert.ok(shift > 0.8 && shift < 6, `spire shifted ${shift.toFixed(2)} m`);
  });

  it('shows storm damage only after the hurricane: blue tarps on roofs', async () => {
    const isTarp = (r: number, g: number, b: number, a: number) =>
      a === 255 && b > 140 && b > r + 90 && g < b - 50 && g < 120;
    const centre = local(-25, -5);
    const counts: number[] = [];
    for (const survey of ['2025-04-02', '2025-10-20']) {
      const r = raster(survey, 'TrueOrtho');
      counts.push(centroidOf(r, centre, 90, isTarp).count);
      r.dataset.close();
    }
    assert.equal(counts[0], 0);
    assert.ok((counts[1] ?? 0) > 2000, `tarp pixels after the storm: ${counts[1]}`);
  });

  it('never paints pure black inside the footprint', async () => {
    for (const asset of ['TrueOrtho', 'Vert', 'North']) {
      const r = raster('2025-10-20', asset);
      const black = centroidOf(r, local(-25, -5), 90, (red, g, b, a) => a === 255 && red + g + b === 0);
      r.dataset.close();
      assert.equal(black.count, 0, asset);
    }
  });
});
