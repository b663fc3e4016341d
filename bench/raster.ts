/**
 * Imagery benchmark: nadir's raster engine in-process against the GDAL command-line tools
 * producing the same file from the same COG, in the same run, alternating, medians.
 *
 *   5000 x 5000 TrueOrtho tif  vs  gdalwarp ... -co COMPRESS=DEFLATE ...
 *   5000 x 5000 TrueOrtho jpg  vs  gdalwarp -of VRT + gdal_translate -of JPEG
 *   2000 x 2000 DetailDsm tif  vs  gdalwarp ... -co PREDICTOR=3
 *
 * plus engine-only figures (png, DSM pictures) and 8 concurrent 5000 x 5000 requests with and
 * without admission control. The CLI runs twice: as commonly typed, and tuned like nadir
 * (-multi, NUM_THREADS=ALL_CPUS, -wm 128). Times come from one long-lived measuring process (like a
 * server); nadir's peak memory from a fresh process per output (bench/raster-probe.ts), the CLI's
 * from `/usr/bin/time`. Writes docs/benchmarks-raster.md.
 *
 * Options: --runs N (5) --no-write --fresh (rebuild the survey in bench/work/raster)
 * No network; every child process is awaited; scratch files are removed.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import type { Asset } from '../src/catalogue/survey.js';
import { aoiMercatorBounds } from '../src/geo/aoi.js';
import { DEFAULT_TUNING, type ImageFormat, RasterEngine } from '../src/raster/index.js';
import { measureCommands, measureEngine, type Sample, spawnJson } from './raster-measure.js';
import type { Probe } from './raster-probe.js';
import {
  type BenchResult,
  type CaseResult,
  type ConcurrencyResult,
  printReport,
  writeReport,
} from './raster-report.js';
import { type BenchSurvey, benchSurvey } from './raster-source.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const WORK = join(ROOT, 'bench/work/raster');
const RADIUS = 100;

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    'no-write': { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
    child: { type: 'string' },
  },
});

function log(message: string): void {
  process.stderr.write(`bench:raster: ${message}\n`);
}

interface Case {
  type: 'TrueOrtho' | 'DetailDsm';
  format: ImageFormat;
  size: number;
  /** Compared with the CLI (the three figures the issue asks for) or engine-only. */
  cli: boolean;
}

const CASES: Case[] = [
  { type: 'TrueOrtho', format: 'tif', size: 5000, cli: true },
  { type: 'TrueOrtho', format: 'jpg', size: 5000, cli: true },
  { type: 'DetailDsm', format: 'tif', size: 2000, cli: true },
  { type: 'TrueOrtho', format: 'png', size: 5000, cli: false },
  { type: 'DetailDsm', format: 'png', size: 2000, cli: false },
  { type: 'DetailDsm', format: 'png', size: 5000, cli: false },
];

/** The GDAL commands that write the same file as nadir, from the same COG. */
function cliCommands(asset: Asset, bench: BenchSurvey, c: Case, tuned: boolean, out: string): string[][] {
  const b = aoiMercatorBounds({ ...bench.centre, radius: RADIUS });
  const cog = fileURLToPath(asset.uri);
  const warp = ['-q', '-overwrite', '-t_srs', 'EPSG:3857', '-te', `${b.minX}`, `${b.minY}`, `${b.maxX}`, `${b.maxY}`];
  warp.push('-ts', `${c.size}`, `${c.size}`, '-r', 'bilinear');
  warp.push(...(asset.kind === 'rgb' ? ['-ot', 'Byte', '-dstalpha'] : ['-ot', 'Float32', '-dstnodata', '-9999']));
  if (tuned) warp.push('-multi', '-wo', 'NUM_THREADS=ALL_CPUS', '-wm', `${DEFAULT_TUNING.warpMemoryMb}`);
  if (c.format === 'jpg') {
    const vrt = `${out}.vrt`;
    const translate = ['-q', '-of', 'JPEG', '-b', '1', '-b', '2', '-b', '3', '-co', 'QUALITY=90', vrt, out];
    return [
      ['gdalwarp', ...warp, '-of', 'VRT', cog, vrt],
      ['gdal_translate', ...translate],
    ];
  }
  // The same creation options as nadir's (src/raster/warp.ts), DEFLATE level included.
  const co = ['TILED=YES', 'COMPRESS=DEFLATE', `ZLEVEL=${DEFAULT_TUNING.deflateLevel}`];
  co.push(...(asset.kind === 'rgb' ? ['PREDICTOR=2', 'PHOTOMETRIC=RGB', 'ALPHA=YES'] : ['PREDICTOR=3']));
  if (tuned) co.push('NUM_THREADS=ALL_CPUS');
  return [['gdalwarp', ...warp, ...co.flatMap((option) => ['-co', option]), cog, out]];
}

/** Per-band checksums: equal means the same pixel values. */
async function checksums(path: string): Promise<string> {
  const { stdout } = await run('gdalinfo', ['-checksum', path]);
  return [...stdout.matchAll(/Checksum=(\d+)/g)].map((m) => m[1]).join(',');
}

async function measureCase(engine: RasterEngine, bench: BenchSurvey, c: Case, runs: number): Promise<CaseResult> {
  const asset = bench.survey.assets[c.type] as Asset;
  const request = { asset, aoi: { ...bench.centre, radius: RADIUS }, size: c.size, format: c.format };
  const scratch = join(WORK, 'out');
  await mkdir(scratch, { recursive: true });
  const ours = join(scratch, `nadir.${c.format}`);
  const result: CaseResult = { ...c, nadir: [], cliPlain: [], cliTuned: [] };
  const variants: [keyof Pick<CaseResult, 'nadir' | 'cliPlain' | 'cliTuned'>, () => Promise<Sample>][] = [
    ['nadir', () => measureEngine(engine, request, ours)],
  ];
  if (c.cli) {
    for (const [key, tuned] of [
      ['cliPlain', false],
      ['cliTuned', true],
    ] as const) {
      const out = join(scratch, `${key}.${c.format}`);
      variants.push([key, () => measureCommands(cliCommands(asset, bench, c, tuned, out), out, out)]);
    }
  }
  await measureEngine(engine, request); // warm-up: file cache, GDAL drivers, glibc's allocator
  for (let i = 0; i < (c.cli ? runs : Math.min(runs, 3)); i++) {
    // Alternate who goes first so neither side always meets a cold or a hot cache.
    const order = i % 2 === 0 ? variants : [...variants].reverse();
    for (const [key, measure] of order) result[key].push(await measure());
    log(
      `${c.type} ${c.format} ${c.size}: run ${i + 1} ${order.map(([k]) => `${k} ${result[k].at(-1)?.ms.toFixed(0)} ms`).join(', ')}`,
    );
  }
  if (c.cli) {
    const theirs = join(scratch, `cliPlain.${c.format}`);
    result.identicalPixels = (await checksums(ours)) === (await checksums(theirs));
  }
  await rm(scratch, { recursive: true, force: true });
  return result;
}

async function child(surveyFile: string, runs: number): Promise<void> {
  const bench = JSON.parse(await readFile(surveyFile, 'utf8')) as BenchSurvey;
  const engine = new RasterEngine();
  const cases: CaseResult[] = [];
  for (const c of CASES) cases.push(await measureCase(engine, bench, c, runs));
  process.stdout.write(JSON.stringify(cases));
}

async function main(): Promise<void> {
  const runs = Number(values.runs);
  if (!(runs >= 1)) throw new Error('--runs must be at least 1');
  if (values.child) return child(values.child, runs);
  if (values.fresh) await rm(WORK, { recursive: true, force: true });
  const bench = await benchSurvey(WORK, log);
  const started = new Date();
  const loadAtStart = loadavg();
  const surveyFile = join(WORK, 'survey.json');
  // Timing in one long-lived process, like a server; 8 libuv threads, so that eight concurrent
  // renders without admission really run side by side in the probes below.
  const env = { UV_THREADPOOL_SIZE: '8' };
  const self = fileURLToPath(import.meta.url);
  const cases = await spawnJson<CaseResult[]>([self, '--child', surveyFile, '--runs', `${runs}`], env);
  // Memory in a fresh process per probe, so nothing retained from earlier renders counts.
  const probe = join(ROOT, 'bench/raster-probe.ts');
  for (const c of cases) {
    c.memory = await spawnJson<Probe>([probe, surveyFile, 'single', c.type, c.format, `${c.size}`], env);
    log(
      `${c.type} ${c.format} ${c.size}: peak ${c.memory.peakMb.toFixed(0)} MB, idle ${c.memory.idleMb.toFixed(0)} MB`,
    );
  }
  const concurrency: ConcurrencyResult[] = [];
  for (const [mode, label] of [
    ['admission', 'default admission (1 GiB budget, 10 s queue)'],
    ['unbounded', 'no admission limit'],
  ] as const) {
    const p = await spawnJson<Probe>([probe, surveyFile, 'concurrent', mode], env);
    log(`${label}: ${p.ok} of ${p.requests} in ${p.ms.toFixed(0)} ms, peak ${p.peakMb.toFixed(0)} MB`);
    concurrency.push({ label, ...p });
  }
  const result: BenchResult = { cases, concurrency };
  printReport(result);
  if (!values['no-write']) {
    const doc = join(ROOT, 'docs/benchmarks-raster.md');
    await writeFile(doc, await writeReport(result, bench, runs, started, loadAtStart));
    await run(join(ROOT, 'node_modules/.bin/biome'), ['format', '--write', doc]); // aligns the tables
    log('wrote docs/benchmarks-raster.md');
  }
}

await main();
