/**
 * Ingest benchmark: `nadir ingest` (the compiled CLI, through bin/nadir, as a child process)
 * against what one would do with the GDAL command line instead, `gdalwarp -t_srs EPSG:3857` then
 * `gdal_translate -of COG`, on the same generated sources with the same threads and block cache:
 *
 * - rgb: 40,000 x 40,000 px RGB in UTM (EPSG:32615, 0.1 m), tiled YCbCr JPEG q90, a mosaic of a real
 *   aerial photo (../shared/realdata) so JPEG has real texture to encode, with a black collar around
 *   it and no alpha (nadir finds and masks the collar, as for OpenDroneMap output);
 * - dsm: 20,000 x 20,000 px Float32 (0.2 m), DEFLATE with the floating-point predictor, a mosaic of
 *   a real DSM.
 *
 * `--quick`: 8,000 and 4,000 px. The sources are generated with GDAL into a temporary folder that
 * is deleted afterwards. Wall time and peak RSS (`/usr/bin/time -v`, "Maximum resident set size")
 * of each process; MP/s are source pixels per second.
 *
 *   npm run build && node --import tsx bench/ingest/run.ts [--quick] [--json <raw.json>]
 *
 * `--delivery` runs the other part instead, a delivery of many tiles in two CRSs ingested with 1 and
 * 2 worker processes (bench/ingest/delivery.ts; also `--rounds N`, `--only gdal|nadir|fleet|local`, `--products rgb,dsm`).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { WARP_MEMORY_MB } from '../../src/ingest/cog-writer.js';
import { INGEST_GDAL_CACHE_MB } from '../../src/ingest/ingest-memory.js';
import { DELIVERY_OPTIONS, deliveryMain } from './delivery.js';
import type { IngestCase, IngestMeasurement, IngestRaw } from './raw.js';
import { ingestSection } from './report.js';

const execFileAsync = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const REALDATA = resolve(ROOT, '../shared/realdata');
const PHOTO = join(REALDATA, 'rio-tiler/201404_13SED190110_201404_0x1500m_CL_1.tif');
const DSM = join(REALDATA, 'fieldimager-ws5/dsm.tif');

/** Both sides: nadir's own GDAL block cache and warper memory for ingest, in MB; every core. */
const CACHE_MB = String(INGEST_GDAL_CACHE_MB);
const WARP_MB = String(WARP_MEMORY_MB);

export interface IngestBenchOptions {
  quick: boolean;
  /** Where progress goes (the measurements never print). */
  log?: (line: string) => void;
}

export interface Timed {
  seconds: number;
  peakRssBytes: number;
  stderr: string;
}

/** Runs a command under `/usr/bin/time -v`: wall seconds and the process's peak RSS. */
export async function timed(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Timed> {
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-v', command, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}:\n${stderr.slice(-2000)}`);
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
  if (!rss) throw new Error(`no peak RSS from /usr/bin/time for ${command}`);
  return { seconds, peakRssBytes: Number(rss[1]) * 1024, stderr };
}

async function gdal(tool: string, args: string[]): Promise<void> {
  await timed(tool, ['-q', ...args]);
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

interface Mosaic {
  path: string;
  tileWidth: number;
  tileHeight: number;
  bands: number;
  dataType: string;
  nodata?: string;
}

/**
 * A VRT repeating `tile` over [margin, size - margin) of a size x size raster (zero outside), with
 * the given CRS and geotransform.
 */
function mosaicVrt(tile: Mosaic, size: number, margin: number, srs: string, geoTransform: number[]): string {
  const bands: string[] = [];
  for (let b = 1; b <= tile.bands; b++) {
    const sources: string[] = [];
    for (let y = margin; y < size - margin; y += tile.tileHeight) {
      for (let x = margin; x < size - margin; x += tile.tileWidth) {
        const w = Math.min(tile.tileWidth, size - margin - x);
        const h = Math.min(tile.tileHeight, size - margin - y);
        sources.push(
          `<SimpleSource><SourceFilename relativeToVRT="0">${escapeXml(tile.path)}</SourceFilename><SourceBand>${b}</SourceBand>` +
            `<SrcRect xOff="0" yOff="0" xSize="${w}" ySize="${h}"/><DstRect xOff="${x}" yOff="${y}" xSize="${w}" ySize="${h}"/></SimpleSource>`,
        );
      }
    }
    const nodata = tile.nodata === undefined ? '' : `<NoDataValue>${tile.nodata}</NoDataValue>`;
    bands.push(
      `<VRTRasterBand dataType="${tile.dataType}" band="${b}">${nodata}\n${sources.join('\n')}\n</VRTRasterBand>`,
    );
  }
  return `<VRTDataset rasterXSize="${size}" rasterYSize="${size}">
<SRS>${escapeXml(srs)}</SRS>
<GeoTransform>${geoTransform.join(', ')}</GeoTransform>
${bands.join('\n')}
</VRTDataset>`;
}

/** The RGB source: the aerial photo mosaicked into a 4096 px tile, that tile over the raster. */
export async function generateRgb(dir: string, size: number): Promise<string> {
  const tileVrt = join(dir, 'rgb-tile.vrt');
  const tile = join(dir, 'rgb-tile.tif');
  await writeFile(
    tileVrt,
    mosaicVrt(
      { path: PHOTO, tileWidth: 383, tileHeight: 232, bands: 3, dataType: 'Byte' },
      4096,
      0,
      'EPSG:32615',
      [0, 1, 0, 0, 0, -1],
    ),
  );
  await gdal('gdal_translate', ['-co', 'TILED=YES', '-co', 'COMPRESS=DEFLATE', tileVrt, tile]);
  const vrt = join(dir, 'rgb.vrt');
  const margin = Math.round(size * 0.03);
  await writeFile(
    vrt,
    mosaicVrt(
      { path: tile, tileWidth: 4096, tileHeight: 4096, bands: 3, dataType: 'Byte' },
      size,
      margin,
      'EPSG:32615',
      [500000, 0.1, 0, 5000000, 0, -0.1],
    ),
  );
  const out = join(dir, 'rgb.tif');
  await gdal('gdal_translate', [
    ...['-co', 'TILED=YES', '-co', 'COMPRESS=JPEG', '-co', 'PHOTOMETRIC=YCBCR', '-co', 'JPEG_QUALITY=90'],
    ...['-co', 'BIGTIFF=YES', '-co', 'NUM_THREADS=ALL_CPUS', '--config', 'GDAL_CACHEMAX', CACHE_MB],
    ...['-colorinterp', 'red,green,blue'],
    vrt,
    out,
  ]);
  return out;
}

export async function generateDsm(dir: string, size: number): Promise<string> {
  const vrt = join(dir, 'dsm.vrt');
  await writeFile(
    vrt,
    mosaicVrt(
      { path: DSM, tileWidth: 395, tileHeight: 407, bands: 1, dataType: 'Float32', nodata: '-3.4e+38' },
      size,
      0,
      'EPSG:32615',
      [600000, 0.2, 0, 5000000, 0, -0.2],
    ),
  );
  const out = join(dir, 'dsm.tif');
  await gdal('gdal_translate', [
    ...['-co', 'TILED=YES', '-co', 'COMPRESS=DEFLATE', '-co', 'PREDICTOR=3', '-co', 'BIGTIFF=YES'],
    ...['-co', 'NUM_THREADS=ALL_CPUS', '--config', 'GDAL_CACHEMAX', CACHE_MB],
    vrt,
    out,
  ]);
  return out;
}

/** The stored COG of an ingest: the one .tif under the data folder's surveys/. */
async function storedCog(dataDir: string): Promise<string> {
  const files = (await readdir(join(dataDir, 'surveys'), { recursive: true })).filter((f) => f.endsWith('.tif'));
  if (files.length !== 1) throw new Error(`expected one stored COG, found ${files.join(', ')}`);
  return join(dataDir, 'surveys', files[0] as string);
}

async function runNadir(
  dir: string,
  kind: 'rgb' | 'dsm',
  source: string,
): Promise<IngestCase['nadir'] & { progress: string[] }> {
  const dataDir = join(dir, `nadir-${kind}`);
  const manifest = join(dir, `${kind}.json`);
  const type = kind === 'rgb' ? 'TrueOrtho' : 'DetailDsm';
  await writeFile(manifest, JSON.stringify({ captureDate: '2026-06-01', assets: { [type]: source } }));
  const bin = join(ROOT, 'bin/nadir');
  const run = await timed(process.execPath, [bin, 'ingest', manifest], { NADIR_DATA_DIR: dataDir });
  const out = await storedCog(dataDir);
  const outputBytes = (await stat(out)).size;
  await rm(dataDir, { recursive: true, force: true });
  return {
    seconds: run.seconds,
    peakRssBytes: run.peakRssBytes,
    commands: [`bin/nadir ingest ${kind}.json`],
    outputBytes,
    progress: run.stderr.split('\n').filter((l) => l.startsWith('ingest ')),
  };
}

async function runReference(dir: string, kind: 'rgb' | 'dsm', source: string): Promise<IngestCase['reference']> {
  const warped = join(dir, `ref-${kind}-3857.tif`);
  const cog = join(dir, `ref-${kind}-cog.tif`);
  const cache = ['--config', 'GDAL_CACHEMAX', CACHE_MB];
  const warp = [
    ...['-t_srs', 'EPSG:3857', '-r', 'bilinear', '-wm', WARP_MB, '-multi', '-wo', 'NUM_THREADS=ALL_CPUS'],
    ...['-co', 'TILED=YES', '-co', 'COMPRESS=ZSTD', '-co', 'ZSTD_LEVEL=1', '-co', 'BIGTIFF=IF_SAFER', ...cache],
    ...(kind === 'rgb' ? ['-dstalpha'] : ['-dstnodata', '-9999']),
    source,
    warped,
  ];
  const translate = [
    ...['-of', 'COG', '-co', 'BLOCKSIZE=256', '-co', 'NUM_THREADS=ALL_CPUS', '-co', 'BIGTIFF=IF_SAFER'],
    ...['-co', 'OVERVIEW_RESAMPLING=AVERAGE', ...cache],
    ...(kind === 'rgb'
      ? ['-co', 'COMPRESS=JPEG', '-co', 'QUALITY=90']
      : ['-co', 'COMPRESS=DEFLATE', '-co', 'PREDICTOR=YES', '-co', 'LEVEL=6']),
    warped,
    cog,
  ];
  const steps: IngestCase['reference']['steps'] = [];
  const commands: string[] = [];
  for (const [tool, args] of [
    ['gdalwarp', warp],
    ['gdal_translate', translate],
  ] as const) {
    const run = await timed(tool, ['-q', ...args]);
    const command = `${tool} ${args.map((a) => (a.startsWith(dir) ? a.slice(dir.length + 1) : a)).join(' ')}`;
    commands.push(command);
    steps.push({ command, seconds: run.seconds, peakRssBytes: run.peakRssBytes });
  }
  const outputBytes = (await stat(cog)).size;
  await rm(warped, { force: true });
  await rm(cog, { force: true });
  return {
    seconds: steps.reduce((s, step) => s + step.seconds, 0),
    peakRssBytes: Math.max(...steps.map((s) => s.peakRssBytes)),
    commands,
    steps,
    outputBytes,
  };
}

export async function runIngestBench(options: IngestBenchOptions): Promise<IngestRaw> {
  const log = options.log ?? (() => {});
  if (!existsSync(join(ROOT, 'dist/cli/bin.js'))) throw new Error('bench/ingest needs the compiled CLI: npm run build');
  if (!existsSync(PHOTO) || !existsSync(DSM)) throw new Error(`bench/ingest needs ${REALDATA}`);
  const rgbSize = options.quick ? 8000 : 40000;
  const dsmSize = options.quick ? 4000 : 20000;
  const dir = await mkdtemp(join(tmpdir(), 'nadir-bench-ingest-'));
  const raw: IngestRaw = {
    quick: options.quick,
    startedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, memoryBytes: totalmem(), gdal: '', loadAverage: loadavg() },
    threads: `NUM_THREADS=ALL_CPUS, GDAL_CACHEMAX=${CACHE_MB} MB, -wm ${WARP_MB} MB (gdalwarp; nadir's own settings are the same)`,
    cases: [],
  };
  try {
    raw.machine.gdal = (await execFileAsync('gdalinfo', ['--version'])).stdout.trim();
    for (const kind of ['rgb', 'dsm'] as const) {
      const size = kind === 'rgb' ? rgbSize : dsmSize;
      log(`ingest bench: generating the ${size} x ${size} ${kind} source`);
      const source = kind === 'rgb' ? await generateRgb(dir, size) : await generateDsm(dir, size);
      log(`ingest bench: nadir ingest ${kind}`);
      const { progress, ...nadir } = await runNadir(dir, kind, source);
      log(`  ${nadir.seconds.toFixed(1)} s, peak RSS ${(nadir.peakRssBytes / 2 ** 20).toFixed(0)} MiB`);
      for (const line of progress.slice(-3)) log(`  stderr: ${line}`);
      log(`ingest bench: gdalwarp + gdal_translate -of COG ${kind}`);
      const reference = await runReference(dir, kind, source);
      log(`  ${reference.seconds.toFixed(1)} s, peak RSS ${(reference.peakRssBytes / 2 ** 20).toFixed(0)} MiB`);
      raw.cases.push({
        name: kind,
        description:
          kind === 'rgb'
            ? 'RGB Byte, UTM 15N 0.1 m, tiled YCbCr JPEG q90, black collar, no alpha'
            : 'Float32 DSM, UTM 15N 0.2 m, tiled DEFLATE predictor 3, nodata',
        width: size,
        height: size,
        pixels: size * size,
        sourceBytes: (await stat(source)).size,
        nadir,
        reference,
      });
      for (const name of await readdir(dir)) if (name.startsWith(kind)) await rm(join(dir, name), { force: true });
    }
    return raw;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export type { IngestMeasurement };

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    // --quick, --json, and the delivery part's --rounds, --only and --products.
    options: { ...DELIVERY_OPTIONS, delivery: { type: 'boolean' } },
  });
  if (values.delivery) {
    // The delivery part (bench/ingest/delivery.ts): many tiles in two CRSs, nadir's workers.
    await deliveryMain(values);
  } else {
    if (values.rounds !== undefined || values.only !== undefined || values.products !== undefined)
      throw new Error('--rounds, --only and --products are options of --delivery');
    const raw = await runIngestBench({
      quick: values.quick ?? false,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    if (values.json) {
      await writeFile(values.json, `${JSON.stringify(raw, null, 2)}\n`);
      process.stderr.write(`raw figures: ${values.json} (${dirname(values.json)})\n`);
    }
    process.stdout.write(ingestSection(raw));
  }
}
