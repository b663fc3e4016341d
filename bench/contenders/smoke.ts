/**
 * Smoke run of the contenders (not a benchmark: short, on whatever machine load there is):
 *
 *   node --import tsx bench/contenders/smoke.ts [--cog path/to/EPSG3857.tif] [--seconds 3] [--connections 8]
 *
 * Takes an ingested RGB COG (by default a demo-town Vert.tif under .tmp/ or data/, copied to
 * bench/work/contenders so a test run cannot delete it mid-way), picks map tiles inside it, pre-cuts
 * them for nginx with gdal_translate, starts nginx, the rasterio tiler and MapServer, checks each
 * answers a 256 x 256 JPEG close to the pre-cut tile, drives each with wrk, runs the AOI command
 * lines once, then stops everything and checks with pgrep that no process it started is left.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import sharp from 'sharp';
import {
  type Bounds,
  nearestZoomForResolution,
  ORIGIN_SHIFT,
  type TileCoord,
  tileBounds,
} from '../../src/geo/web-mercator.js';
import { startTileNginx } from '../load/nginx.js';
import { type Service, startedGroups } from '../load/processes.js';
import { assertAllStatus, runWrk } from '../load/wrk.js';
import type { Sample } from '../raster/measure.js';
import { measureGdalCli } from './gdal-cli.js';
import { startMapServer } from './mapserver.js';
import { measureRasterioAoi } from './rasterio-aoi.js';
import { startRasterioTiler } from './rasterio-tiler.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const WORK = join(ROOT, 'bench/work/contenders');
const QUALITY = 85;

const { values } = parseArgs({
  options: {
    cog: { type: 'string' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '8' },
  },
});

function log(message: string): void {
  process.stderr.write(`smoke: ${message}\n`);
}

async function findCog(): Promise<string> {
  if (values.cog) return values.cog;
  for (const base of ['.tmp/test-demo-town/surveys', 'data/surveys', 'data/demo/surveys']) {
    const surveys = await readdir(join(ROOT, base)).catch(() => [] as string[]);
    for (const survey of surveys) {
      for (const version of await readdir(join(ROOT, base, survey)).catch(() => [] as string[])) {
        const path = join(ROOT, base, survey, version, 'Vert.tif');
        if (await stat(path).catch(() => undefined)) return path;
      }
    }
  }
  throw new Error('no ingested Vert.tif found: run the tests or `nadir demo` first, or pass --cog');
}

async function cogBounds(path: string): Promise<{ bounds: Bounds; pixel: number }> {
  const { stdout } = await run('gdalinfo', ['-json', path]);
  const info = JSON.parse(stdout) as { geoTransform: number[]; size: [number, number] };
  const [originX = 0, pixel = 0, , originY = 0, , pixelY = 0] = info.geoTransform;
  const bounds = {
    minX: originX,
    maxX: originX + pixel * info.size[0],
    maxY: originY,
    minY: originY + pixelY * info.size[1],
  };
  return { bounds, pixel };
}

/** An n x n block of tiles at zoom z around the centre of `b` (all inside it, for the COGs we use). */
function tilesAround(b: Bounds, z: number, n: number): TileCoord[] {
  const size = (2 * ORIGIN_SHIFT) / 2 ** z;
  const cx = Math.floor(((b.minX + b.maxX) / 2 + ORIGIN_SHIFT) / size);
  const cy = Math.floor((ORIGIN_SHIFT - (b.minY + b.maxY) / 2) / size);
  const tiles: TileCoord[] = [];
  for (let dy = 0; dy < n; dy++) {
    for (let dx = 0; dx < n; dx++) tiles.push({ z, x: cx - Math.floor(n / 2) + dx, y: cy - Math.floor(n / 2) + dy });
  }
  return tiles;
}

async function precut(cog: string, tiles: TileCoord[], root: string): Promise<void> {
  for (const t of tiles) {
    const dir = join(root, `${t.z}`, `${t.x}`);
    const out = join(dir, `${t.y}.jpg`);
    if (await stat(out).catch(() => undefined)) continue;
    await mkdir(dir, { recursive: true });
    const b = tileBounds(t);
    const args = ['-q', '-of', 'JPEG', '-co', `QUALITY=${QUALITY}`, '-b', '1', '-b', '2', '-b', '3', '-mask', 'none'];
    const window = [b.minX, b.maxY, b.maxX, b.minY].map(String);
    args.push('-r', 'bilinear', '-projwin', ...window, '-outsize', '256', '256');
    await run('gdal_translate', [...args, cog, out], { env: { ...process.env, GDAL_PAM_ENABLED: 'NO' } });
  }
}

/** Mean absolute difference per channel value between two JPEGs, after checking the first is 256 x 256. */
async function compareTile(body: Buffer, reference: Buffer, label: string): Promise<number> {
  const meta = await sharp(body).metadata();
  if (meta.format !== 'jpeg' || meta.width !== 256 || meta.height !== 256) {
    throw new Error(`${label}: expected a 256 x 256 JPEG, got ${meta.format} ${meta.width} x ${meta.height}`);
  }
  const decode = (image: Buffer) => sharp(image).removeAlpha().raw().toBuffer();
  const [a, b] = [await decode(body), await decode(reference)];
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

async function leftovers(): Promise<string> {
  const groups = startedGroups();
  if (groups.length === 0) return '';
  try {
    const { stdout } = await run('pgrep', ['-a', '-g', groups.join(',')]);
    return stdout.trim();
  } catch {
    return ''; // pgrep exits 1 when nothing matches
  }
}

/** The AOI command lines once each on one tile's bounds, and a check that the warp path matches gdalwarp. */
async function aoiCommands(cog: string, tile: TileCoord): Promise<void> {
  const bounds = tileBounds(tile);
  const out = join(WORK, 'aoi');
  await mkdir(out, { recursive: true });
  const size = 1024;
  const aoi = { cog, bounds, size };
  const commands: [string, () => Promise<Sample>][] = [
    ['gdalwarp tif', () => measureGdalCli({ ...aoi, format: 'tif' }, join(out, 'gdal.tif'))],
    ['gdalwarp VRT + gdal_translate jpg', () => measureGdalCli({ ...aoi, format: 'jpg' }, join(out, 'gdal.jpg'))],
    ['rasterio read tif', () => measureRasterioAoi({ ...aoi, out: join(out, 'read.tif') })],
    ['rasterio warp tif', () => measureRasterioAoi({ ...aoi, out: join(out, 'warp.tif'), method: 'warp' })],
    ['rasterio read jpg', () => measureRasterioAoi({ ...aoi, out: join(out, 'read.jpg') })],
  ];
  process.stdout.write(`AOI ${size} x ${size} px (tile ${tile.z}/${tile.x}/${tile.y}), one run each:\n\n`);
  process.stdout.write('| command | wall s | peak RSS MB | bytes |\n|---|---:|---:|---:|\n');
  for (const [name, measure] of commands) {
    const s = await measure();
    process.stdout.write(`| ${name} | ${(s.ms / 1000).toFixed(2)} | ${s.peakMb.toFixed(0)} | ${s.bytes} |\n`);
  }
  const checksums = async (path: string) => {
    const { stdout } = await run('gdalinfo', ['-checksum', path]);
    return [...stdout.matchAll(/Checksum=(\d+)/g)].map((m) => m[1]).join(',');
  };
  const same = (await checksums(join(out, 'gdal.tif'))) === (await checksums(join(out, 'warp.tif')));
  process.stdout.write(`\nrasterio warp tif has gdalwarp's pixels: ${same ? 'yes' : 'NO'}\n`);
  if (!same) throw new Error("rasterio_aoi.py --method warp did not reproduce gdalwarp's pixels");
}

async function main(): Promise<void> {
  await mkdir(WORK, { recursive: true });
  const cog = join(WORK, 'cog.tif');
  if (!(await stat(cog).catch(() => undefined))) await copyFile(await findCog(), cog);
  const { bounds, pixel } = await cogBounds(cog);
  const z = nearestZoomForResolution(pixel);
  const tiles = [...tilesAround(bounds, z, 4), ...tilesAround(bounds, z - 1, 2)];
  log(`COG ${cog}: ${pixel.toFixed(4)} m pixels (zoom ${z}); ${tiles.length} tiles at zooms ${z} and ${z - 1}`);
  const tileRoot = join(WORK, `tiles-q${QUALITY}`);
  await precut(cog, tiles, tileRoot);

  const services: Service[] = [];
  try {
    const nginx = await startTileNginx({ root: tileRoot });
    services.push(nginx);
    const rasterio = await startRasterioTiler({ cogPath: cog, workers: 2, quality: QUALITY });
    services.push(rasterio);
    const mapserver = await startMapServer({ cogPath: cog, processes: 2, quality: QUALITY });
    services.push(mapserver);
    const contenders = [
      { name: 'nginx, pre-cut files', tileUrl: nginx.tileUrl },
      { name: 'rasterio + gunicorn (2 sync workers)', tileUrl: rasterio.tileUrl },
      { name: 'MapServer WMS, FastCGI x 2', tileUrl: mapserver.tileUrl },
    ];

    for (const c of contenders) {
      const diffs: number[] = [];
      for (const t of [tiles[0], tiles.at(-1)] as TileCoord[]) {
        const response = await fetch(c.tileUrl(t.z, t.x, t.y));
        const body = Buffer.from(await response.arrayBuffer());
        if (response.status !== 200) throw new Error(`${c.name}: ${response.status} for ${t.z}/${t.x}/${t.y}`);
        if (response.headers.get('content-type') !== 'image/jpeg') {
          throw new Error(`${c.name}: content type ${response.headers.get('content-type')}`);
        }
        const reference = await readFile(join(tileRoot, `${t.z}`, `${t.x}`, `${t.y}.jpg`));
        diffs.push(await compareTile(body, reference, c.name));
      }
      log(`${c.name}: 256 x 256 JPEG; mean |difference| from the pre-cut tile ${diffs.map((d) => d.toFixed(2))}`);
    }

    const seconds = Number(values.seconds);
    const connections = Number(values.connections);
    const rows: string[] = [];
    for (const c of contenders) {
      const urls = tiles.map((t) => c.tileUrl(t.z, t.x, t.y));
      const result = await runWrk({ urls, connections, seconds, warmupSeconds: 1 });
      assertAllStatus(result, 200, c.name);
      const mb = (result.transferPerSec / 1024 / 1024).toFixed(1);
      const latency = [result.p50Ms, result.p90Ms, result.p99Ms].map((v) => v.toFixed(2)).join(' / ');
      rows.push(
        `| ${c.name} | ${result.requestsPerSecond.toFixed(0)} | ${latency} | ${result.requests} all 200 | ${mb} |`,
      );
      log(`${c.name}: ${result.requestsPerSecond.toFixed(0)} req/s`);
    }
    process.stdout.write(
      `\nwrk ${seconds} s, ${connections} connections, 2 threads, ${tiles.length} tiles round robin (busy shared machine):\n\n` +
        '| contender | req/s | p50 / p90 / p99 ms | answers | MB/s |\n|---|---:|---:|---|---:|\n' +
        `${rows.join('\n')}\n\n`,
    );

    await aoiCommands(cog, tilesAround(bounds, z - 2, 1)[0] as TileCoord);
  } finally {
    for (const service of services.reverse()) await service.stop();
  }
  const left = await leftovers();
  if (left) throw new Error(`processes left running:\n${left}`);
  log(`stopped; pgrep finds none of the ${startedGroups().length} process groups started`);
}

await main();
