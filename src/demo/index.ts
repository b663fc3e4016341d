/**
 * The demo town: a seeded, procedurally generated Mexico Beach, Florida, rendered as a set of
 * surveys (DSM, true ortho, vertical mosaic and four panoramas each) plus their manifests, so
 * nadir has something worth looking at without downloading any imagery.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { buildTerrainFields } from './coarse-field.js';
import { type Box, clipToBox, snappedBounds } from './footprint.js';
import { GRID_QUANTUM } from './geo.js';
import { GeoTiffWriter } from './geotiff-writer.js';
import { allocateGround } from './ground.js';
import { type AssetName, manifestFor, writeManifest } from './manifest.js';
import { ASSET_KIND, DEMO_GSD, RENDER_ORDER } from './products.js';
import { pixelGridFor } from './raster-output.js';
import { type RenderJob, RenderPool } from './render-pool.js';
import { prepareScene } from './scene.js';
import { GridStorage } from './scene-types.js';
import { shadowHorizon } from './shadows.js';
import { DEMO_SURVEYS } from './surveys.js';
import { Terrain } from './terrain.js';
import { planTown } from './town-plan.js';

export { DEMO_LOCATION, lonLatToUtm, TOWN_ORIGIN_UTM as DEMO_TOWN_ORIGIN_UTM, utmToLonLat } from './geo.js';
export { DEMO_LANDMARKS, type DemoLandmark } from './landmarks.js';
export { DEMO_GSD } from './products.js';
export { DEMO_SURVEYS, type DemoSurvey } from './surveys.js';

export const DEFAULT_SEED = 20181010;

export interface DemoSurveyOutput {
  name: string;
  manifestPath: string;
  id: string;
  captureDate: string;
}

export interface GenerateDemoOptions {
  outDir: string;
  seed?: number;
  onProgress?: (done: number, total: number, label: string) => void;
  /** Only generate these surveys (by name, e.g. '2024-03-14'); default all. */
  surveys?: string[];
  /**
   * Clip every footprint to this box, in metres east/north of the town centre (the UTM position
   * of DEMO_LOCATION snapped to 0.6 m). For quick tests; surveys clipped away are skipped.
   */
  clip?: Box;
  /** Height model cell size in metres (0.15 default; 0.3 is about four times faster). */
  modelCell?: number;
  /** Render worker threads besides the main thread (default: cores - 1). Output is identical for any count. */
  workers?: number;
}

/**
 * How far around a footprint the model extends: a 45-degree ray reaching the ground at the
 * footprint's edge starts this far out at this height, which clears every house and tree.
 * (Only the spire is taller, and it stands well inside every footprint.)
 */
const MODEL_MARGIN = 24;

export async function generateDemoTown(opts: GenerateDemoOptions): Promise<DemoSurveyOutput[]> {
  const seed = (opts.seed ?? DEFAULT_SEED) >>> 0;
  const cell = opts.modelCell ?? 0.15;
  if (Math.abs(GRID_QUANTUM / cell - Math.round(GRID_QUANTUM / cell)) > 1e-9)
    throw new Error(`modelCell must divide ${GRID_QUANTUM} m`);
  const selected = DEMO_SURVEYS.filter((s) => !opts.surveys || opts.surveys.includes(s.name))
    .map((survey) => ({
      survey,
      footprint: opts.clip ? clipToBox(survey.footprint, opts.clip) : [...survey.footprint],
    }))
    .filter(({ footprint }) => footprint.length >= 3);
  if (selected.length === 0) return [];
  const total = selected.length * 8 + 1;
  let done = 0;
  const progress = (label: string) => opts.onProgress?.(++done, total, label);

  const pool = await RenderPool.start(opts.workers);
  // Files finish (compress, close, rename) in the background while the next survey renders;
  // each manifest is written once its survey's files are all in place.
  const completions: Promise<void>[] = [];
  const outputs: DemoSurveyOutput[] = [];
  try {
    const terrain = new Terrain(seed);
    const plan = planTown(seed, terrain);
    const windows = selected.map(({ footprint }) => grow(snappedBounds(footprint), MODEL_MARGIN));
    const everything = union(windows);
    const fields = buildTerrainFields(terrain, seed, everything);
    // The surveys overlap a lot: paint the bare ground once for all of them.
    const ground = allocateGround(everything, cell);
    await pool.paintGround(ground, fields, seed);
    progress('town plan and ground');

    const storage = new GridStorage();
    for (const [k, { survey, footprint }] of selected.entries()) {
      const dir = join(opts.outDir, survey.name);
      await mkdir(dir, { recursive: true });
      const { scene, decals } = prepareScene({ plan, fields, survey, seed, window: windows[k]!, cell, storage });
      await pool.rasterize(scene, ground, decals);
      await pool.light(scene.grid, survey.sun, shadowHorizon(scene.grid, survey.sun));
      await pool.transpose(scene);
      progress(`${survey.name} height model`);

      const bounds = snappedBounds(footprint);
      const writers: GeoTiffWriter[] = [];
      const finishing: Promise<void>[] = [];
      const jobs: RenderJob[] = RENDER_ORDER.map((asset: AssetName) => ({
        asset,
        out: pixelGridFor(bounds, DEMO_GSD[asset]),
        open: async () => {
          const writer = await GeoTiffWriter.create(
            join(dir, `${asset}.tif`),
            pixelGridFor(bounds, DEMO_GSD[asset]),
            ASSET_KIND[asset],
          );
          writers.push(writer);
          return writer;
        },
        rendered: (sink) =>
          finishing.push((sink as GeoTiffWriter).finish().then(() => progress(`${survey.name} ${asset}`))),
      }));
      try {
        await pool.render(jobs, scene, survey, footprint);
      } catch (error) {
        await Promise.allSettled(finishing);
        await Promise.allSettled(writers.map((w) => w.abandon()));
        throw error;
      }
      const manifestPath = join(dir, 'manifest.json');
      completions.push(Promise.all(finishing).then(() => writeManifest(manifestPath, manifestFor(survey))));
      outputs.push({ name: survey.name, manifestPath, id: survey.id, captureDate: survey.captureDate });
    }
  } catch (error) {
    await Promise.allSettled(completions);
    await pool.close();
    throw error;
  }
  const results = await Promise.allSettled(completions);
  await pool.close();
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
  return outputs;
}

function grow(box: Box, margin: number): Box {
  const q = GRID_QUANTUM;
  return {
    minX: Math.floor((box.minX - margin) / q) * q,
    minY: Math.floor((box.minY - margin) / q) * q,
    maxX: Math.ceil((box.maxX + margin) / q) * q,
    maxY: Math.ceil((box.maxY + margin) / q) * q,
  };
}

function union(boxes: Box[]): Box {
  return {
    minX: Math.min(...boxes.map((b) => b.minX)),
    minY: Math.min(...boxes.map((b) => b.minY)),
    maxX: Math.max(...boxes.map((b) => b.maxX)),
    maxY: Math.max(...boxes.map((b) => b.maxY)),
  };
}
