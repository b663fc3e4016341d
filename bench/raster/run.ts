/**
 * Raster benchmark (issue #6): one AOI of the benchmark survey (bench/raster/source.ts, built by
 * `nadir ingest`) as TrueOrtho tif and jpg at 500, 1000, 2000 and 5000 px, by
 *
 * - nadir: the real `nadir serve`, GET /staticmap/v2/surveys/{id}/TrueOrtho.{format}, timed to the
 *   last byte, with the server's peak RSS during the request;
 * - nadir's RasterEngine in-process (this process: the render without HTTP);
 * - the GDAL command line, as commonly typed and tuned like nadir (bench/contenders/gdal-cli.ts);
 * - a rasterio script written the way rio-tiler reads a part (bench/contenders/rasterio-aoi.ts);
 *
 * the command lines measured under /usr/bin/time (wall time from spawn, process start-up included).
 * For each output the contenders take turns, their order rotating every round; ratios are taken
 * between runs of the same round. Optionally, eight concurrent 5000 x 5000 renders in one process,
 * with and without admission control (bench/raster/probe.ts).
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import type { Asset } from '../../src/catalogue/survey.js';
import { aoiMercatorBounds } from '../../src/geo/aoi.js';
import type * as RasterModule from '../../src/raster/index.js';
import type { RasterEngine } from '../../src/raster/index.js';
import type * as LocalStorageModule from '../../src/storage/local-storage.js';
import { assetDataset } from '../asset-dataset.js';
import { measureGdalCli } from '../contenders/gdal-cli.js';
import { measureRasterioAoi } from '../contenders/rasterio-aoi.js';
import { importCompiled } from '../load/compiled.js';
import type { SectionOptions } from '../report/section.js';
import { idleRssMb, measureDownload, measureEngine, type Sample, spawnJson } from './measure.js';
import type { Probe } from './probe.js';
import {
  type Agreement,
  type CaseResult,
  CONTENDERS,
  type ConcurrencyResult,
  type Contender,
  type Format,
  type RasterRaw,
  type RasterSettings,
} from './raw.js';
import { type RasterServer, startRasterServer } from './server.js';
import { type BenchSurvey, benchSurvey } from './source.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
export const WORK = join(ROOT, 'bench/work/raster');
export const RADIUS = 100;

export function rasterSettings(quick: boolean, overrides: Partial<RasterSettings> = {}): RasterSettings {
  const base: RasterSettings = {
    sizes: [500, 1000, 2000, 5000],
    formats: ['tif', 'jpg'],
    rounds: quick ? 1 : 5,
    concurrency: !quick,
  };
  return { ...base, ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) };
}

/** Per-band checksums: equal means the same pixel values. */
async function checksums(path: string): Promise<string> {
  const { stdout } = await run('gdalinfo', ['-checksum', path]);
  return [...stdout.matchAll(/Checksum=(\d+)/g)].map((m) => m[1]).join(',');
}

/** Mean absolute difference per channel value (alpha included for tif) between two images of one size. */
async function meanDifference(a: string, b: string): Promise<number> {
  const [x, y] = await Promise.all([a, b].map((file) => sharp(file).raw().toBuffer()));
  if (!x || !y || x.length !== y.length) return Number.NaN;
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += Math.abs((x[i] as number) - (y[i] as number));
  return sum / x.length;
}

async function versions(): Promise<Record<string, string>> {
  const first = async (command: string, args: string[]) => {
    const { stdout, stderr } = await run(command, args).catch((e) => ({ stdout: '', stderr: String(e) }));
    return `${stdout}${stderr}`.trim().split('\n')[0] ?? '';
  };
  const rasterio = await first('/usr/bin/python3', ['-c', 'import rasterio; print(rasterio.__version__)']);
  return { node: process.version, gdal: await first('gdalinfo', ['--version']), rasterio: `rasterio ${rasterio}` };
}

/** What every output's measurements share: the server, this process's engine, the survey and the AOI. */
interface Context {
  server: RasterServer;
  engine: RasterEngine;
  bench: BenchSurvey;
  ortho: Asset;
  /** The ortho COG on disk, for the command lines (the catalogue holds its storage key). */
  orthoPath: string;
  scratch: string;
  log: (line: string) => void;
}

async function measureCase(ctx: Context, format: Format, size: number, rounds: number, first: boolean) {
  const { server, engine, ortho, scratch } = ctx;
  const aoi = { ...ctx.bench.centre, radius: RADIUS };
  const cli = { cog: ctx.orthoPath, bounds: aoiMercatorBounds(aoi), size, format };
  const out = (who: Contender) => join(scratch, `${who}-${size}.${format}`);
  const measure: Record<Contender, (save: boolean) => Promise<Sample>> = {
    nadir: (save) =>
      measureDownload(server.imageryUrl('TrueOrtho', format, size), server.pid, save ? out('nadir') : undefined),
    engine: () => measureEngine(engine, { asset: ortho, aoi, size, format }),
    gdal: () => measureGdalCli(cli, out('gdal')),
    gdalTuned: () => measureGdalCli({ ...cli, tuned: true }, out('gdalTuned')),
    rasterio: () => measureRasterioAoi({ ...cli, out: out('rasterio') }),
  };
  // Warm-up: the server's and this process's first render of this output (JIT, GDAL drivers);
  // before the first output, every command line once too (binaries and Python modules cached).
  for (const who of first ? CONTENDERS : (['nadir', 'engine'] as const)) await measure[who](false);
  const samples = Object.fromEntries(CONTENDERS.map((c) => [c, [] as Sample[]])) as Record<Contender, Sample[]>;
  for (let round = 0; round < rounds; round++) {
    const order = CONTENDERS.map((_, i) => CONTENDERS[(i + round) % CONTENDERS.length] as Contender);
    for (const who of order) samples[who].push(await measure[who](round === 0));
    const line = CONTENDERS.map((c) => `${c} ${((samples[c].at(-1)?.ms ?? 0) / 1000).toFixed(2)} s`).join(', ');
    ctx.log(`${format} ${size}: round ${round + 1}: ${line}`);
  }
  const nadirSums = await checksums(out('nadir'));
  const agreement = async (peer: Contender): Promise<Agreement> => {
    const identical = (await checksums(out(peer))) === nadirSums;
    return { identical, meanDifference: identical ? 0 : await meanDifference(out('nadir'), out(peer)) };
  };
  const sameAsNadir = {
    gdal: await agreement('gdal'),
    gdalTuned: await agreement('gdalTuned'),
    rasterio: await agreement('rasterio'),
  };
  const freshServer = await freshServerMemory(ctx.bench, format, size);
  ctx.log(
    `${format} ${size}: a fresh server peaks at ${freshServer.peakMb.toFixed(0)} MB (${freshServer.idleMb.toFixed(0)} MB idle)`,
  );
  return { format, size, samples, freshServer, sameAsNadir };
}

/** Measures; bench/raster/report.ts words the figures. */
export async function measureRaster(
  options: SectionOptions,
  overrides: Partial<RasterSettings> = {},
): Promise<RasterRaw> {
  const settings = rasterSettings(options.quick, overrides);
  const log = (line: string) => options.log(`raster: ${line}`);
  const started = Date.now();
  const loadStart = loadavg();
  if (options.fresh) await rm(WORK, { recursive: true, force: true });
  const bench = await benchSurvey(WORK, log);
  const ortho = bench.survey.assets.TrueOrtho as Asset;
  // The server runs the compiled CLI, as deployed.
  await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: ROOT });
  const server = await startRasterServer(bench, join(WORK, 'data'), RADIUS);
  const scratch = join(WORK, 'out');
  await mkdir(scratch, { recursive: true });
  try {
    const serverIdleMb = await idleRssMb(server.pid);
    // The in-process engine is the compiled one, as the server runs it.
    const { RasterEngine } = await importCompiled<typeof RasterModule>('raster/index.js');
    const { LocalStorage } = await importCompiled<typeof LocalStorageModule>('storage/local-storage.js');
    const storage = new LocalStorage(join(WORK, 'data'));
    const ctx: Context = {
      server,
      engine: new RasterEngine({ storage }),
      bench,
      ortho,
      orthoPath: await assetDataset(storage, ortho, join(scratch, 'ortho.vrt')),
      scratch,
      log,
    };
    const cases: CaseResult[] = [];
    for (const format of settings.formats) {
      for (const size of settings.sizes)
        cases.push(await measureCase(ctx, format, size, settings.rounds, cases.length === 0));
    }
    await server.stop();
    const concurrency = settings.concurrency ? await concurrent(bench, log) : [];
    const raw: RasterRaw = {
      settings,
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model.trim() ?? 'unknown',
        memoryGb: totalmem() / 2 ** 30,
        loadStart,
        loadEnd: loadavg(),
      },
      versions: await versions(),
      survey: {
        id: bench.survey.id,
        centre: bench.centre,
        ortho: { width: ortho.width, height: ortho.height, gsd: ortho.gsd, maxZoom: ortho.maxZoom },
      },
      serverIdleMb,
      cases,
      concurrency,
      seconds: (Date.now() - started) / 1000,
    };
    return raw;
  } finally {
    await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The goal's "peak RSS for one request": a new server, a 64 px request of the same format first
 * (GDAL's drivers loaded, the COG opened), then the one request. A long-running server's figure
 * also holds what earlier, larger renders left allocated.
 */
async function freshServerMemory(bench: BenchSurvey, format: Format, size: number) {
  const server = await startRasterServer(bench, join(WORK, 'data'), RADIUS);
  try {
    await measureDownload(server.imageryUrl('TrueOrtho', format, 64), server.pid);
    const idleMb = await idleRssMb(server.pid);
    const { peakMb } = await measureDownload(server.imageryUrl('TrueOrtho', format, size), server.pid);
    return { idleMb, peakMb };
  } finally {
    await server.stop();
  }
}

/** Eight 5000 x 5000 renders at once in a fresh process, with and without admission control. */
async function concurrent(bench: BenchSurvey, log: (line: string) => void): Promise<ConcurrencyResult[]> {
  const surveyFile = join(WORK, 'survey.json');
  await writeFile(surveyFile, JSON.stringify(bench));
  const probe = join(ROOT, 'bench/raster/probe.ts');
  const results: ConcurrencyResult[] = [];
  for (const [mode, label] of [
    ['admission', 'default admission (1 GiB budget, 10 s queue)'],
    ['unbounded', 'no admission limit'],
  ] as const) {
    // 8 libuv threads, so that eight renders without admission really run side by side.
    const p = await spawnJson<Probe>([probe, surveyFile, 'concurrent', mode], { UV_THREADPOOL_SIZE: '8' });
    log(`${label}: ${p.ok} of ${p.requests} in ${(p.ms / 1000).toFixed(1)} s, peak ${p.peakMb.toFixed(0)} MB`);
    results.push({ label, ...p });
  }
  return results;
}
