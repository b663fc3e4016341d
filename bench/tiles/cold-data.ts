/**
 * The cold tile benchmark's data (issue 19), built once under bench/work/tiles-cold/ and reused
 * (`fresh` rebuilds): two surveys over the same 16,384 px square at 7.5 cm (1.2 km, about 7,500
 * map tiles from z18 to z21), 11 km west of the tile part's square so the two never share a tile.
 *
 * - "older": full, the demo town's 2025-04-02 picture repeated (data.ts's way);
 * - "newer": the post-storm picture over most of the square, minus diagonal stripes 3.6 m wide every
 *   36 m (every z21 tile inside meets one, so nearly every tile is drawn from both surveys), a wavy
 *   western margin and a few round holes (clouds), where the older survey shows alone.
 *
 * So the list of composite tiles is thousands long and a benchmark can ask for each once per round,
 * as an origin behind a CDN is asked: nothing it draws was drawn before.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type BenchSurvey,
  benchSurvey,
  buildSource,
  demoPicture,
  type Layout,
  nadir,
  ROOT,
  writeAlpha,
} from './data.js';

export const COLD_WORK = join(ROOT, 'bench/work/tiles-cold');
const DATA = join(COLD_WORK, 'data');
const LAYOUT: Layout = { size: 16_384, origin: { x: 630_000, y: 3_322_000, epsg: 32616 } };
/** Bump when what is built here changes, so an old build is not reused. */
const REVISION = 1;

export interface ColdData {
  revision: number;
  dataDir: string;
  apiKey: string;
  older: BenchSurvey;
  newer: BenchSurvey;
}

function newerValid(x: number, y: number): boolean {
  const size = LAYOUT.size;
  if ((x + y) % 480 < 48) return false;
  if (x < size * 0.06 * (1.5 + Math.sin(y / 700))) return false;
  for (const [hx, hy, hr] of [
    [0.3, 0.3, 700],
    [0.7, 0.4, 500],
    [0.5, 0.75, 900],
  ] as const) {
    const ex = x - hx * size;
    const ey = y - hy * size;
    if (ex * ex + ey * ey < hr * hr) return false;
  }
  return true;
}

async function build(log: (line: string) => void): Promise<ColdData> {
  await mkdir(COLD_WORK, { recursive: true });
  await nadir(['demo', '--json'], log, DATA);
  const older = await buildSource('older', await demoPicture('2025-04-02', DATA), undefined, log, LAYOUT, COLD_WORK);
  const alpha = join(COLD_WORK, 'newer-alpha.tif');
  await writeAlpha(alpha, LAYOUT.size, newerValid);
  const newer = await buildSource('newer', await demoPicture('2025-10-20', DATA), alpha, log, LAYOUT, COLD_WORK);
  await rm(alpha);
  const ids = ['5e4f1a10-0000-4000-8000-00000000c001', '5e4f1a10-0000-4000-8000-00000000c002'];
  const manifests: string[] = [];
  for (const [name, source, captureDate, id] of [
    ['older', older, '2025-09-01', ids[0]],
    ['newer', newer, '2025-10-21', ids[1]],
  ] as const) {
    const manifest = join(COLD_WORK, `${name}.json`);
    await writeFile(manifest, JSON.stringify({ id, captureDate, assets: { Vert: source } }));
    manifests.push(manifest);
  }
  log('ingesting both (COG writing: several minutes)');
  await nadir(['ingest', ...manifests], log, DATA);
  // The sources are 1-2 GB each; the COGs are what is measured.
  await rm(older);
  await rm(newer);
  const show = async (id: string) =>
    benchSurvey(JSON.parse(await nadir(['surveys', 'show', id, '--json'], log, DATA)), DATA);
  const created = JSON.parse(
    await nadir(
      ['accounts', 'create', '--name', `bench-cold-${Date.now()}`, '--rate-limit', '1000000000', '--json'],
      log,
      DATA,
    ),
  ) as { apiKey: string };
  return {
    revision: REVISION,
    dataDir: DATA,
    apiKey: created.apiKey,
    older: await show(ids[0] as string),
    newer: await show(ids[1] as string),
  };
}

/** Builds the data once; later calls reuse bench/work/tiles-cold/state.json while its COGs exist. */
export async function coldData(options: { fresh: boolean; log: (line: string) => void }): Promise<ColdData> {
  const state = join(COLD_WORK, 'state.json');
  if (options.fresh) await rm(COLD_WORK, { recursive: true, force: true });
  const saved = JSON.parse(await readFile(state, 'utf8').catch(() => 'null')) as ColdData | null;
  if (saved?.revision === REVISION && existsSync(saved.older.cog) && existsSync(saved.newer.cog)) return saved;
  const started = Date.now();
  const data = await build(options.log);
  options.log(`cold data built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  await writeFile(state, JSON.stringify(data, null, 2));
  return data;
}
