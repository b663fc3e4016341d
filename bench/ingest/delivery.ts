/**
 * Ingest benchmark, delivery part (issue 31): a survey delivered as many GeoTIFF tiles in two CRSs,
 * ingested by `nadir ingest` from a manifest glob (`"Vert": "rgb/*.tif"`, `"DetailDsm": "dsm/*.tif"`)
 * with 1 and 2 worker processes, against the GDAL command line on the same files in the same run:
 * `gdalbuildvrt` (one VRT per CRS: it refuses to mix them) then one `gdalwarp -of COG` of both VRTs.
 *
 * The delivery (delivery-generate.ts) is 64 RGB tiles of 5,600 x 5,600 px (2.0 gigapixels) and 16
 * DSM tiles of 5,600 x 5,600 px, half in UTM 16N and half in 17N; `--quick`: 1,400 x 1,400 px tiles
 * (the RGB still sharded; a few minutes in all). It is generated with GDAL into a temporary folder
 * that is deleted afterwards.
 *
 * Each run is timed under `/usr/bin/time -v` (wall seconds, the largest process's peak RSS, CPU
 * seconds) while proc-tree.ts samples every process below it (each worker's peak, the tree's
 * total). Both sides get GDAL_CACHEMAX (environment and --config) and the same warp memory.
 * Rounds are interleaved: per round and product, GDAL, nadir --workers 1, nadir --workers 2.
 * A nadir run that fails is recorded as failed (its last stderr lines) and the bench goes on.
 * Then the fleet part (delivery-fleet.ts): the same files through the queue on PostgreSQL to two
 * `nadir worker`s writing to an S3 server, once uninterrupted and once with the worker
 * coordinating the survey killed with SIGKILL mid-job (`--only fleet` runs that part alone).
 *
 *   npm run bench:ingest -- --delivery [--quick] [--rounds N] [--json FILE]
 *   npm run build && node --import tsx bench/ingest/delivery.ts [--quick] [--rounds N] [--json FILE]
 *
 * Writes the raw figures to bench/results/ingest-delivery-<date>.json (`-quick` before `.json` for
 * a quick run; `--json FILE` instead) and prints the markdown table on stdout.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { DEFAULT_JPEG_QUALITY } from '../../src/geo/asset-layout.js';
import { WARP_MEMORY_MB } from '../../src/ingest/cog-writer.js';
import { INGEST_GDAL_CACHE_MB } from '../../src/ingest/ingest-memory.js';
import { FLEET_JOB_TIMEOUT_S, runFleet } from './delivery-fleet.js';
import { filesOfCrs, type GeneratedDelivery, generateDelivery } from './delivery-generate.js';
import type { Contender, DeliveryProduct, DeliveryRaw, DeliveryRun, DeliveryStep } from './delivery-raw.js';
import { deliverySection, summarise } from './delivery-report.js';
import { ProcessTreeSampler, type TreeMemory } from './proc-tree.js';

const execFileAsync = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const REALDATA = resolve(ROOT, '../shared/realdata');
const PHOTO = join(REALDATA, 'rio-tiler/201404_13SED190110_201404_0x1500m_CL_1.tif');
const DSM = join(REALDATA, 'fieldimager-ws5/dsm.tif');
const SAMPLE_MS = 200;

/** Both sides: nadir's own GDAL block cache and warp memory for ingest, in MB; every core. */
const CACHE_MB = INGEST_GDAL_CACHE_MB;
const WARP_MB = WARP_MEMORY_MB;

export interface DeliveryBenchOptions {
  quick: boolean;
  rounds: number;
  /**
   * Which sides to run (all unless told): GDAL, nadir's local runs (and the fleet), the fleet part
   * alone, or GDAL and nadir's local runs without the fleet.
   */
  only?: 'gdal' | 'nadir' | 'fleet' | 'local';
  /** Only these products (both unless told). */
  products?: DeliveryProduct['name'][];
  log?: (line: string) => void;
}

interface TreeTimed {
  code: number | null;
  seconds: number;
  peakRssBytes: number;
  userSeconds: number;
  systemSeconds: number;
  stderr: string;
  memory: TreeMemory;
}

/** `/usr/bin/time -v command args` with the process tree below it sampled; never throws on exit code. */
async function timedTree(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<TreeTimed> {
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-v', command, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (child.pid === undefined) throw new Error('could not start /usr/bin/time');
  const sampler = new ProcessTreeSampler(child.pid, SAMPLE_MS);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.length > 4_000_000) stderr = stderr.slice(-2_000_000);
  });
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  const seconds = (performance.now() - started) / 1000;
  const memory = sampler.stop();
  const number = (pattern: RegExp) => Number(pattern.exec(stderr)?.[1] ?? Number.NaN);
  return {
    code,
    seconds,
    peakRssBytes: number(/Maximum resident set size \(kbytes\): (\d+)/) * 1024,
    userSeconds: number(/User time \(seconds\): ([\d.]+)/),
    systemSeconds: number(/System time \(seconds\): ([\d.]+)/),
    stderr,
    memory,
  };
}

/** The last lines of a failed command's stderr, without /usr/bin/time's own report. */
function errorOf(run: TreeTimed): string {
  const own = run.stderr.split(/\n\s*Command (?:being timed|exited with non-zero status)/)[0] ?? run.stderr;
  return own.trim().split('\n').slice(-6).join('\n') || `exit code ${run.code}`;
}

async function treeFiles(dir: string): Promise<{ files: number; bytes: number }> {
  if (!existsSync(dir)) return { files: 0, bytes: 0 };
  let files = 0;
  let bytes = 0;
  for (const name of await readdir(dir, { recursive: true })) {
    if (!name.endsWith('.tif')) continue;
    files++;
    bytes += (await stat(join(dir, name))).size;
  }
  return { files, bytes };
}

function emptyRun(round: number, product: DeliveryProduct, contender: Contender): DeliveryRun {
  return {
    round,
    product: product.name,
    contender,
    ok: true,
    loadAverage: loadavg()[0] ?? 0,
    seconds: 0,
    megapixelsPerSecond: 0,
    userSeconds: 0,
    systemSeconds: 0,
    peakRssBytes: 0,
    mainPeakRssBytes: 0,
    workerPeakRssBytes: 0,
    workerCount: 0,
    peakTotalRssBytes: 0,
    sumOfPeaksBytes: 0,
    processes: [],
    steps: [],
    commands: [],
    outputFiles: 0,
    outputBytes: 0,
  };
}

/** Adds one timed step (a command) to a run. */
function addStep(run: DeliveryRun, command: string, timed: TreeTimed): void {
  const step: DeliveryStep = {
    command,
    seconds: timed.seconds,
    peakRssBytes: timed.peakRssBytes,
    userSeconds: timed.userSeconds,
    systemSeconds: timed.systemSeconds,
  };
  run.steps.push(step);
  run.commands.push(command);
  run.seconds += timed.seconds;
  run.userSeconds += timed.userSeconds;
  run.systemSeconds += timed.systemSeconds;
  run.peakRssBytes = Math.max(run.peakRssBytes, timed.peakRssBytes);
  const main = timed.memory.processes.filter((p) => p.depth === 1);
  const workers = timed.memory.processes.filter((p) => p.depth > 1);
  run.mainPeakRssBytes = Math.max(run.mainPeakRssBytes, ...main.map((p) => p.peakRssBytes));
  run.workerPeakRssBytes = Math.max(run.workerPeakRssBytes, ...workers.map((p) => p.peakRssBytes));
  run.workerCount = Math.max(run.workerCount, workers.length);
  run.peakTotalRssBytes = Math.max(run.peakTotalRssBytes, timed.memory.peakTotalRssBytes);
  run.sumOfPeaksBytes = Math.max(run.sumOfPeaksBytes, timed.memory.sumOfPeaksBytes);
  run.processes.push(...timed.memory.processes);
  if (timed.code !== 0) {
    run.ok = false;
    run.error = errorOf(timed);
  }
}

/** gdalbuildvrt per CRS, then one gdalwarp -of COG of the VRTs, as issue 31 asks. */
async function runGdal(
  tmp: string,
  delivery: GeneratedDelivery,
  product: DeliveryProduct,
  round: number,
): Promise<DeliveryRun> {
  const run = emptyRun(round, product, 'gdal');
  const work = join(tmp, `gdal-${product.name}-${round}`);
  await mkdir(work, { recursive: true });
  const rel = (p: string) => relative(tmp, p);
  const cache = ['--config', 'GDAL_CACHEMAX', String(CACHE_MB)];
  const env = { GDAL_CACHEMAX: String(CACHE_MB) };
  try {
    const vrts: string[] = [];
    for (const epsg of Object.keys(product.tilesByCrs).map((crs) => Number(crs.replace('EPSG:', '')))) {
      const vrt = join(work, `${product.name}-${epsg}.vrt`);
      const files = filesOfCrs(delivery, product.name, epsg);
      const timed = await timedTree('gdalbuildvrt', ['-q', ...cache, vrt, ...files], env);
      const zone = epsg === 32616 ? '16N' : '17N';
      addStep(
        run,
        `gdalbuildvrt -q ${cache.join(' ')} ${rel(vrt)} ${rel(delivery.dir)}/${product.name}/${zone}_*.tif`,
        timed,
      );
      if (!run.ok) return run;
      vrts.push(vrt);
    }
    const out = join(work, `${product.name}-3857-cog.tif`);
    const args = [
      '-q',
      ...['-t_srs', 'EPSG:3857', '-r', 'bilinear', '-of', 'COG', '-co', 'TILING_SCHEME=GoogleMapsCompatible'],
      // -dstalpha: the sources' masks become an alpha band, which the COG driver turns into the
      // JPEG COG's mask, as nadir's; without it gdalwarp -of COG writes no mask (black for no data).
      ...(product.name === 'rgb'
        ? ['-co', 'COMPRESS=JPEG', '-co', `QUALITY=${DEFAULT_JPEG_QUALITY}`, '-dstalpha']
        : ['-co', 'COMPRESS=DEFLATE', '-co', 'PREDICTOR=YES', '-dstnodata', '-9999']),
      // 256 px blocks: each COG tile a map tile, as nadir writes (the COG driver's default is 512).
      ...['-co', 'BLOCKSIZE=256', '-co', 'OVERVIEW_RESAMPLING=AVERAGE', '-co', 'NUM_THREADS=ALL_CPUS'],
      ...['-co', 'BIGTIFF=IF_SAFER'],
      ...['-multi', '-wo', 'NUM_THREADS=ALL_CPUS', '-wm', String(WARP_MB), ...cache],
      ...vrts,
      out,
    ];
    const timed = await timedTree('gdalwarp', args, env);
    addStep(run, `gdalwarp ${args.map((a) => (a.startsWith(tmp) ? rel(a) : a)).join(' ')}`, timed);
    if (run.ok) {
      const written = await treeFiles(work);
      run.outputFiles = written.files;
      run.outputBytes = written.bytes;
    }
    return run;
  } finally {
    run.megapixelsPerSecond = run.ok ? product.pixels / 1e6 / run.seconds : 0;
    await rm(work, { recursive: true, force: true });
  }
}

/** The compiled CLI on the manifest (a glob), with a fresh data folder. */
async function runNadir(
  tmp: string,
  delivery: GeneratedDelivery,
  product: DeliveryProduct,
  round: number,
  workers: 1 | 2,
): Promise<DeliveryRun> {
  const run = emptyRun(round, product, workers === 1 ? 'nadir-1' : 'nadir-2');
  const dataDir = join(tmp, `nadir-data-${product.name}-${workers}-${round}`);
  const manifest = delivery.manifests[product.name];
  const bin = join(ROOT, 'bin/nadir');
  try {
    const timed = await timedTree(process.execPath, [bin, 'ingest', manifest, '--workers', String(workers)], {
      NADIR_DATA_DIR: dataDir,
      GDAL_CACHEMAX: String(CACHE_MB),
    });
    addStep(
      run,
      `GDAL_CACHEMAX=${CACHE_MB} NADIR_DATA_DIR=${relative(tmp, dataDir)} bin/nadir ingest ${relative(tmp, manifest)} --workers ${workers}`,
      timed,
    );
    run.progress = timed.stderr
      .split('\n')
      .filter((l) => l.startsWith('ingest '))
      .slice(-4);
    if (run.ok) {
      const written = await treeFiles(join(dataDir, 'surveys'));
      run.outputFiles = written.files;
      run.outputBytes = written.bytes;
      if (written.files === 0) {
        run.ok = false;
        run.error = 'nadir ingest exited 0 but stored no COG under surveys/';
      }
    }
    return run;
  } finally {
    run.megapixelsPerSecond = run.ok ? product.pixels / 1e6 / run.seconds : 0;
    await rm(dataDir, { recursive: true, force: true });
  }
}

function describe(run: DeliveryRun): string {
  if (!run.ok) return `  failed: ${(run.error ?? '').split('\n').slice(-2).join(' / ')}`;
  const workers = run.workerCount > 0 ? `, worker peak ${(run.workerPeakRssBytes / 2 ** 20).toFixed(0)} MiB` : '';
  return (
    `  ${run.seconds.toFixed(1)} s, ${run.megapixelsPerSecond.toFixed(2)} MP/s, peak RSS ` +
    `${(run.peakRssBytes / 2 ** 20).toFixed(0)} MiB${workers}, total ${(run.peakTotalRssBytes / 2 ** 20).toFixed(0)} MiB, ` +
    `${run.outputFiles} COG(s) ${(run.outputBytes / 2 ** 20).toFixed(1)} MiB`
  );
}

export async function runDeliveryBench(options: DeliveryBenchOptions): Promise<DeliveryRaw> {
  const log = options.log ?? (() => {});
  if (!existsSync(PHOTO) || !existsSync(DSM)) throw new Error(`bench/ingest --delivery needs ${REALDATA}`);
  if (options.only !== 'gdal' && !existsSync(join(ROOT, 'dist/cli/bin.js')))
    throw new Error('bench/ingest --delivery needs the compiled CLI: npm run build');
  const loadAverageAtStart = loadavg();
  const startedAt = new Date().toISOString();
  const tmp = await mkdtemp(join(tmpdir(), 'nadir-bench-delivery-'));
  try {
    const gdalVersion = (await execFileAsync('gdalinfo', ['--version'])).stdout.trim();
    log(`ingest delivery bench: generating the ${options.quick ? 'quick ' : ''}delivery in ${tmp}`);
    const generateStarted = performance.now();
    const delivery = await generateDelivery(tmp, {
      quick: options.quick,
      cacheMb: CACHE_MB,
      photo: PHOTO,
      dsm: DSM,
      log,
    });
    const generateSeconds = (performance.now() - generateStarted) / 1000;
    const runs: DeliveryRun[] = [];
    const chosen = delivery.products.filter((p) => !options.products || options.products.includes(p.name));
    for (let round = 1; round <= (options.only === 'fleet' ? 0 : options.rounds); round++) {
      for (const product of chosen) {
        const contenders: Contender[] =
          options.only === 'gdal'
            ? ['gdal']
            : options.only === 'nadir'
              ? ['nadir-1', 'nadir-2']
              : ['gdal', 'nadir-1', 'nadir-2'];
        for (const contender of contenders) {
          log(`round ${round}/${options.rounds}, ${product.name}: ${contender}`);
          const run =
            contender === 'gdal'
              ? await runGdal(tmp, delivery, product, round)
              : await runNadir(tmp, delivery, product, round, contender === 'nadir-1' ? 1 : 2);
          log(describe(run));
          runs.push(run);
        }
      }
    }
    const fleet =
      options.only === 'gdal' || options.only === 'local'
        ? undefined
        : {
            jobTimeoutSeconds: FLEET_JOB_TIMEOUT_S,
            products: await runFleet(tmp, delivery, { quick: options.quick, log }),
          };
    const partial = {
      bench: 'ingest-delivery' as const,
      quick: options.quick,
      rounds: options.rounds,
      startedAt,
      finishedAt: new Date().toISOString(),
      conditions: {
        loadAverageAtStart,
        nproc: Number((await execFileAsync('nproc')).stdout.trim()) || availableParallelism(),
        memoryBytes: totalmem(),
        gdal: gdalVersion,
        gdalCacheMaxMb: CACHE_MB,
        warpMemoryMb: WARP_MB,
        threads:
          'gdalwarp -multi -wo NUM_THREADS=ALL_CPUS -co NUM_THREADS=ALL_CPUS; nadir: its own threads per worker process',
        node: process.version,
        sampleIntervalMs: SAMPLE_MS,
        generateSeconds,
      },
      area: delivery.area,
      products: chosen,
      runs,
      ...(fleet ? { fleet } : {}),
    };
    return { ...partial, ...summarise(partial) };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

export function defaultResultPath(quick: boolean, now = new Date()): string {
  return join(ROOT, 'bench/results', `ingest-delivery-${now.toISOString().slice(0, 10)}${quick ? '-quick' : ''}.json`);
}

/** The command line of the delivery part, shared by delivery.ts and run.ts --delivery. */
export async function deliveryMain(values: {
  quick?: boolean | undefined;
  rounds?: string | undefined;
  json?: string | undefined;
  only?: string | undefined;
  products?: string | undefined;
}): Promise<void> {
  const rounds = Number(values.rounds ?? '1');
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds must be a whole number >= 1, got ${values.rounds}`);
  const only = ['gdal', 'nadir', 'fleet', 'local'] as const;
  if (values.only !== undefined && !(only as readonly string[]).includes(values.only))
    throw new Error(`--only must be one of ${only.join(', ')}, got ${values.only}`);
  const products = values.products?.split(',');
  if (products?.some((p) => p !== 'rgb' && p !== 'dsm')) throw new Error(`--products is a list of rgb, dsm`);
  const quick = values.quick ?? false;
  const raw = await runDeliveryBench({
    quick,
    rounds,
    ...(values.only ? { only: values.only as (typeof only)[number] } : {}),
    ...(products ? { products: products as DeliveryProduct['name'][] } : {}),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const path = values.json ?? defaultResultPath(quick);
  await writeFile(path, `${JSON.stringify(raw, null, 2)}\n`);
  process.stderr.write(`raw figures: ${path}\n`);
  process.stdout.write(deliverySection(raw));
}

export const DELIVERY_OPTIONS = {
  quick: { type: 'boolean' },
  rounds: { type: 'string' },
  json: { type: 'string' },
  only: { type: 'string' },
  products: { type: 'string' },
} as const;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { ...DELIVERY_OPTIONS, delivery: { type: 'boolean' } } });
  await deliveryMain(values);
}
