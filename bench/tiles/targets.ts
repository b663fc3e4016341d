/**
 * What is measured: each server with the URLs it is asked for, the status every answer must have,
 * and (for the ones that draw pixels) the tile it must look like, so that no server is fast because
 * it answers something else.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import type { TileCoord } from '../../src/geo/web-mercator.js';
import type { MapServer } from '../contenders/mapserver.js';
import type { RasterioTiler } from '../contenders/rasterio-tiler.js';
import type { Nginx } from '../load/nginx.js';
import { runWrk } from '../load/wrk.js';
import type { Target } from './measure.js';
import type { BareServer } from './servers.js';
import { nadirTileUrl, pool, type TileFormat, type TileLists } from './tile-lists.js';

export interface Servers {
  nadir: { url: string; apiKey: string };
  /** nadir under `--workers auto`: same data and key. */
  nadirCluster: { url: string; processes: number };
  nginx: Nginx & { tileUrl(z: number, x: number, y: number): string };
  bare: BareServer;
  rasterio: RasterioTiler;
  mapserver: MapServer;
}

/** A target and, for those that draw, the tiles it was asked for and what each must look like. */
export interface CheckedTarget extends Target {
  /** Load before measuring, s: each process of a cluster keeps its own caches, and wrk reaches them all. */
  warmSeconds?: number;
  tiles?: TileCoord[];
  reference?: (t: TileCoord) => Promise<Buffer>;
}

const key = (t: TileCoord) => `${t.z}/${t.x}/${t.y}`;

export function tileTargets(servers: Servers, lists: TileLists, precutRoot: string, bareKb: number): CheckedTarget[] {
  const { nadir, nadirCluster, nginx, bare, rasterio, mapserver } = servers;
  const clusterUrl = (t: TileCoord, format: TileFormat) => nadirTileUrl(nadirCluster.url, nadir.apiKey, t, format);
  const processes = `${nadirCluster.processes - 1} workers`;
  const pt = lists.passThrough;
  const comp = lists.composite;
  const nadirUrl = (t: TileCoord, format: TileFormat) => nadirTileUrl(nadir.url, nadir.apiKey, t, format);
  const precut = (t: TileCoord) => readFile(join(precutRoot, `${t.z}`, `${t.x}`, `${t.y}.jpg`));
  const nadirTile = (format: TileFormat) => async (t: TileCoord) =>
    Buffer.from(await (await fetch(nadirUrl(t, format))).arrayBuffer());
  const passThrough = (id: string, name: string, url: (t: TileCoord) => string): CheckedTarget => ({
    id,
    name,
    urls: pt.map(url),
    expect: 200,
    tiles: pt,
    reference: precut,
  });
  const composite = (id: string, name: string, format: TileFormat, url: (t: TileCoord) => string): CheckedTarget => ({
    id,
    name,
    urls: comp.map(url),
    expect: 200,
    tiles: comp,
    reference: nadirTile(format),
  });
  return [
    passThrough('nadir-pass', 'nadir pass-through jpg', (t) => nadirUrl(t, 'jpg')),
    {
      id: 'nadir-304',
      name: 'nadir 304 revalidation',
      urls: pt.map((t) => nadirUrl(t, 'jpg')),
      headersByUrl: Object.fromEntries(
        pt.map((t) => [nadirUrl(t, 'jpg'), { 'If-None-Match': lists.etags[key(t)] ?? '' }]),
      ),
      expect: 304,
    },
    { id: 'nadir-jpg', name: 'nadir composite jpg', urls: comp.map((t) => nadirUrl(t, 'jpg')), expect: 200 },
    { id: 'nadir-png', name: 'nadir composite png', urls: comp.map((t) => nadirUrl(t, 'png')), expect: 200 },
    {
      ...passThrough('nadir-pass-cluster', `nadir pass-through jpg, ${processes}`, (t) => clusterUrl(t, 'jpg')),
      warmSeconds: 4,
    },
    {
      id: 'nadir-jpg-cluster',
      name: `nadir composite jpg, ${processes}`,
      urls: comp.map((t) => clusterUrl(t, 'jpg')),
      expect: 200,
      warmSeconds: 4,
    },
    {
      id: 'nadir-png-cluster',
      name: `nadir composite png, ${processes}`,
      urls: comp.map((t) => clusterUrl(t, 'png')),
      expect: 200,
      warmSeconds: 4,
    },
    passThrough('nginx', 'nginx, pre-cut files', (t) => nginx.tileUrl(t.z, t.x, t.y)),
    {
      id: 'bare-node',
      name: `bare Node http, ${bareKb} KB`,
      urls: pt.map((t) => `${bare.url}/${key(t)}.jpg`),
      expect: 200,
    },
    passThrough('rasterio', 'rasterio, one COG jpg', (t) => rasterio.tileUrl(t.z, t.x, t.y)),
    passThrough('mapserver', 'MapServer, one COG jpg', (t) => mapserver.tileUrl(t.z, t.x, t.y)),
    composite('rasterio-jpg', 'rasterio composite jpg', 'jpg', (t) => rasterio.mosaicUrl(t.z, t.x, t.y, 'jpg')),
    composite('rasterio-png', 'rasterio composite png', 'png', (t) => rasterio.mosaicUrl(t.z, t.x, t.y, 'png')),
    composite('mapserver-jpg', 'MapServer composite jpg', 'jpg', (t) => mapserver.mosaicUrl(t.z, t.x, t.y, 'jpg')),
    composite('mapserver-png', 'MapServer composite png', 'png', (t) => mapserver.mosaicUrl(t.z, t.x, t.y, 'png')),
  ];
}

/** Mean absolute difference per channel value (alpha included) between two images of the same size. */
export async function meanDifference(a: Buffer, b: Buffer): Promise<number> {
  const decode = (image: Buffer) => sharp(image).ensureAlpha().raw().toBuffer();
  const [x, y] = [await decode(a), await decode(b)];
  if (x.length !== y.length) return Number.POSITIVE_INFINITY;
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += Math.abs((x[i] as number) - (y[i] as number));
  return sum / x.length;
}

/**
 * Every URL once (caches warm, files in the page cache), each answer's status checked, then the
 * target's own warm-up load if it has one; for the targets that draw, the largest mean pixel difference from the reference over three tiles.
 */
export async function prewarm(target: CheckedTarget): Promise<number | undefined> {
  const statuses = await pool(target.urls, 4, async (url) => {
    const response = await fetch(url, { headers: target.headersByUrl?.[url] ?? {} });
    await response.arrayBuffer();
    return response.status;
  });
  const wrong = statuses.filter((s) => s !== target.expect).length;
  if (wrong > 0) throw new Error(`${target.name}: ${wrong} of ${statuses.length} answers were not ${target.expect}`);
  if (target.warmSeconds) {
    await runWrk({
      urls: target.urls,
      headersByUrl: target.headersByUrl,
      connections: 64,
      seconds: target.warmSeconds,
    });
  }
  const { tiles, reference } = target;
  if (!tiles || !reference) return undefined;
  const differences: number[] = [];
  for (const i of [0, Math.floor(tiles.length / 2), tiles.length - 1]) {
    const body = Buffer.from(await (await fetch(target.urls[i] as string)).arrayBuffer());
    differences.push(await meanDifference(body, await reference(tiles[i] as TileCoord)));
  }
  return Math.max(...differences);
}
