/**
 * The tile benchmark's data, built once under bench/work/tiles/ and reused (`fresh` rebuilds):
 *
 * - the demo town (`nadir demo`), so the catalogue holds more than the surveys measured;
 * - survey "older": 8192 x 8192 px at 7.5 cm, fully valid, the demo town's 2025-04-02 Vert picture
 *   repeated (the town's own pixels, not resampled: aerial texture, so JPEG sizes and decode times
 *   are those of imagery);
 * - survey "newer": the same place from the post-storm 2025-10-20 picture, with an alpha band that
 *   leaves an irregular footprint and stripes and holes inside it, so that many tiles are drawn
 *   from both surveys (composites) and the older survey shows alone around it (pass-through).
 *
 * Both are ingested with the real CLI; a bench account with a huge tile rate limit gets a key.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import gdal from 'gdal-async';
import { LocalStorage } from '../../src/storage/local-storage.js';
import { assetDatasetSync } from '../asset-dataset.js';

const run = promisify(execFile);
export const ROOT = join(import.meta.dirname, '../..');
export const WORK = join(ROOT, 'bench/work/tiles');
const DATA = join(WORK, 'data');
const SIZE = 8192;
const PIXEL = 0.075;
/** UTM 16N, 10 km north-west of the demo town (which is at 652581, 3314170): its own place on the map. */
const ORIGIN = { x: 641000, y: 3322000, epsg: 32616 };

/** Where and how large a bench survey's square is (the cold part, cold-data.ts, builds a larger one elsewhere). */
export interface Layout {
  size: number;
  origin: { x: number; y: number; epsg: number };
}
const LAYOUT: Layout = { size: SIZE, origin: ORIGIN };
/** Bump when what is built here changes, so an old build is not reused. */
const REVISION = 1;

export interface BenchSurvey {
  id: string;
  captureDate: string;
  /** The Vert COG written by ingest (what the GDAL contenders read). */
  cog: string;
  minZoom: number;
  maxZoom: number;
  /** EPSG:3857 bounds of the COG. */
  bounds: { minX: number; minY: number; maxX: number; maxY: number };
}

export interface TileData {
  revision: number;
  dataDir: string;
  apiKey: string;
  older: BenchSurvey;
  newer: BenchSurvey;
  /** Surveys in the catalogue in all (the demo town's included). */
  surveyCount: number;
}

export async function nadir(args: string[], log: (line: string) => void, dataDir = DATA): Promise<string> {
  log(`nadir ${args.join(' ')}`);
  const env = { ...process.env, NADIR_DATA_DIR: dataDir, NADIR_LOG_LEVEL: 'warn' };
  const { stdout } = await run(process.execPath, [join(ROOT, 'bin/nadir'), ...args], {
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** The largest axis-aligned rectangle of a picture whose alpha is 255 everywhere, on a 16 px grid. */
async function validRectangle(path: string): Promise<{ x: number; y: number; width: number; height: number }> {
  const dataset = await gdal.openAsync(path);
  try {
    const { x: width, y: height } = dataset.rasterSize;
    const alpha = dataset.bands.get(4);
    const pixels = (await alpha.pixels.readAsync(0, 0, width, height)) as Uint8Array;
    const cell = 16;
    const cols = Math.floor(width / cell);
    const rows = Math.floor(height / cell);
    // Column heights of valid cells ending at the current row, then the largest rectangle in that histogram.
    const heights = new Array<number>(cols).fill(0);
    let best = { x: 0, y: 0, width: 0, height: 0 };
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        let valid = true;
        for (let dy = 0; dy < cell && valid; dy++) {
          const row = (r * cell + dy) * width + c * cell;
          for (let dx = 0; dx < cell; dx++) if (pixels[row + dx] !== 255) valid = false;
        }
        heights[c] = valid ? (heights[c] as number) + 1 : 0;
      }
      const stack: number[] = [];
      for (let c = 0; c <= cols; c++) {
        const h = c === cols ? 0 : (heights[c] as number);
        while (stack.length > 0 && (heights[stack.at(-1) as number] as number) >= h) {
          const top = heights[stack.pop() as number] as number;
          const left = stack.length > 0 ? (stack.at(-1) as number) + 1 : 0;
          if (top * (c - left) > best.width * best.height)
            best = { x: left, y: r - top + 1, width: c - left, height: top };
        }
        stack.push(c);
      }
    }
    return { x: best.x * cell, y: best.y * cell, width: best.width * cell, height: best.height * cell };
  } finally {
    dataset.close();
  }
}

/** A VRT repeating `rect` of `picture` over size x size px at 7.5 cm, placed at the layout's origin. */
function mosaicVrt(
  picture: string,
  rect: { x: number; y: number; width: number; height: number },
  alpha: string | undefined,
  { size, origin }: Layout,
) {
  const sources: string[] = [];
  for (let y = 0; y < size; y += rect.height) {
    for (let x = 0; x < size; x += rect.width) {
      const w = Math.min(rect.width, size - x);
      const h = Math.min(rect.height, size - y);
      sources.push(
        `<SimpleSource><SourceFilename relativeToVRT="0">${picture}</SourceFilename><SourceBand>BAND</SourceBand>` +
          `<SrcRect xOff="${rect.x}" yOff="${rect.y}" xSize="${w}" ySize="${h}"/>` +
          `<DstRect xOff="${x}" yOff="${y}" xSize="${w}" ySize="${h}"/></SimpleSource>`,
      );
    }
  }
  const bands = ['Red', 'Green', 'Blue'].map(
    (colour, i) =>
      `<VRTRasterBand dataType="Byte" band="${i + 1}"><ColorInterp>${colour}</ColorInterp>` +
      `${sources.join('').replaceAll('BAND', `${i + 1}`)}</VRTRasterBand>`,
  );
  if (alpha) {
    bands.push(
      `<VRTRasterBand dataType="Byte" band="4"><ColorInterp>Alpha</ColorInterp><SimpleSource>` +
        `<SourceFilename relativeToVRT="0">${alpha}</SourceFilename><SourceBand>1</SourceBand></SimpleSource></VRTRasterBand>`,
    );
  }
  return (
    `<VRTDataset rasterXSize="${size}" rasterYSize="${size}"><SRS>EPSG:${origin.epsg}</SRS>` +
    `<GeoTransform>${origin.x}, ${PIXEL}, 0, ${origin.y}, 0, ${-PIXEL}</GeoTransform>${bands.join('')}</VRTDataset>`
  );
}

/**
 * The newer survey's alpha: a wavy blob over about half the square, minus diagonal stripes (6 m
 * every 60 m, like strips a flight missed) and a few round holes (clouds). In pixels of SIZE.
 */
function newerSurveyValid(x: number, y: number): boolean {
  const c = SIZE / 2;
  const dx = x - c;
  const dy = y - c;
  const angle = Math.atan2(dy, dx);
  const radius = SIZE * 0.36 * (1 + 0.18 * Math.sin(3 * angle) + 0.07 * Math.sin(7 * angle + 1));
  if (dx * dx + dy * dy > radius * radius) return false;
  if ((x + y) % 800 < 80) return false;
  for (const [hx, hy, hr] of [
    [0.4, 0.35, 420],
    [0.62, 0.58, 300],
    [0.45, 0.7, 520],
  ] as const) {
    const ex = x - hx * SIZE;
    const ey = y - hy * SIZE;
    if (ex * ex + ey * ey < hr * hr) return false;
  }
  return true;
}

/** A one-band 0/255 mask of size x size px, 255 where `valid` says. */
export async function writeAlpha(
  path: string,
  size = SIZE,
  valid: (x: number, y: number) => boolean = newerSurveyValid,
): Promise<void> {
  const options = ['TILED=YES', 'COMPRESS=DEFLATE'];
  const dataset = gdal.open(path, 'w', 'GTiff', size, size, 1, gdal.GDT_Byte, options);
  try {
    const band = dataset.bands.get(1);
    const rows = 256;
    const buffer = new Uint8Array(size * rows);
    for (let y0 = 0; y0 < size; y0 += rows) {
      for (let dy = 0; dy < rows; dy++) {
        for (let x = 0; x < size; x++) buffer[dy * size + x] = valid(x, y0 + dy) ? 255 : 0;
      }
      await band.pixels.writeAsync(0, y0, size, rows, buffer);
    }
  } finally {
    dataset.close();
  }
}

export async function demoPicture(date: string, dataDir = DATA): Promise<string> {
  const demo = join(dataDir, 'demo');
  for (const town of await readdir(demo)) {
    const path = join(demo, town, date, 'Vert.tif');
    if (existsSync(path)) return path;
  }
  throw new Error(`no demo town Vert.tif for ${date} under ${demo}`);
}

/** The source GeoTIFF `<work>/<name>.tif`: the demo picture's valid rectangle repeated over the layout. */
export async function buildSource(
  name: string,
  picture: string,
  alpha: string | undefined,
  log: (line: string) => void,
  layout: Layout = LAYOUT,
  work = WORK,
) {
  const rect = await validRectangle(picture);
  log(
    `${name}: ${layout.size} x ${layout.size} px from ${rect.width} x ${rect.height} px of ${picture}${alpha ? ' + alpha' : ''}`,
  );
  const vrt = join(work, `${name}.vrt`);
  const tif = join(work, `${name}.tif`);
  await writeFile(vrt, mosaicVrt(picture, rect, alpha, layout));
  const co = ['TILED=YES', 'COMPRESS=DEFLATE', 'PREDICTOR=2', 'NUM_THREADS=ALL_CPUS'].flatMap((o) => ['-co', o]);
  await run('gdal_translate', ['-q', ...co, vrt, tif]);
  await rm(vrt);
  return tif;
}

export interface IngestedSurvey {
  id: string;
  captureDate: string;
  assets: Record<string, { uri: string; minZoom: number; maxZoom: number; bounds: BenchSurvey['bounds'] }>;
}

export function benchSurvey(survey: IngestedSurvey, dataDir = DATA): BenchSurvey {
  const vert = survey.assets.Vert;
  if (!vert) throw new Error(`survey ${survey.id} has no Vert asset`);
  const { minZoom, maxZoom, bounds } = vert;
  // The catalogue holds a storage key; the GDAL contenders need the file in the data folder.
  const cog = assetDatasetSync(new LocalStorage(dataDir), vert, join(dataDir, `${survey.id}-Vert.vrt`));
  return { id: survey.id, captureDate: survey.captureDate, cog, minZoom, maxZoom, bounds };
}

async function build(log: (line: string) => void): Promise<TileData> {
  await mkdir(WORK, { recursive: true });
  await nadir(['demo', '--json'], log);
  const older = await buildSource('older', await demoPicture('2025-04-02'), undefined, log);
  const alpha = join(WORK, 'newer-alpha.tif');
  await writeAlpha(alpha);
  const newer = await buildSource('newer', await demoPicture('2025-10-20'), alpha, log);
  const manifests: string[] = [];
  for (const [name, source, captureDate, id] of [
    ['older', older, '2025-09-01', '5e4f1a10-0000-4000-8000-000000000001'],
    ['newer', newer, '2025-10-21', '5e4f1a10-0000-4000-8000-000000000002'],
  ] as const) {
    const manifest = join(WORK, `${name}.json`);
    await writeFile(manifest, JSON.stringify({ id, captureDate, assets: { Vert: source } }));
    manifests.push(manifest);
  }
  log('ingesting both (COG writing: a few minutes)');
  await nadir(['ingest', ...manifests], log);
  const show = async (id: string) => benchSurvey(JSON.parse(await nadir(['surveys', 'show', id, '--json'], log)));
  const a = await show('5e4f1a10-0000-4000-8000-000000000001');
  const b = await show('5e4f1a10-0000-4000-8000-000000000002');
  const created = JSON.parse(
    await nadir(['accounts', 'create', '--name', `bench-${Date.now()}`, '--rate-limit', '1000000000', '--json'], log),
  ) as { apiKey: string };
  const list = JSON.parse(await nadir(['surveys', 'list', '--json'], log)) as { total: number };
  return { revision: REVISION, dataDir: DATA, apiKey: created.apiKey, older: a, newer: b, surveyCount: list.total };
}

/** Builds the data once; later calls reuse bench/work/tiles/state.json while its COGs exist. */
export async function tileData(options: { fresh: boolean; log: (line: string) => void }): Promise<TileData> {
  const state = join(WORK, 'state.json');
  if (options.fresh) await rm(WORK, { recursive: true, force: true });
  const saved = JSON.parse(await readFile(state, 'utf8').catch(() => 'null')) as TileData | null;
  if (saved?.revision === REVISION && existsSync(saved.older.cog) && existsSync(saved.newer.cog)) return saved;
  const started = Date.now();
  const data = await build(options.log);
  options.log(`data built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  await writeFile(state, JSON.stringify(data, null, 2));
  return data;
}
