/**
 * The tile lists, found by asking nadir itself: every tile of the older survey at its three highest
 * zooms is requested once, and the answer's headers say how it was made (Server-Timing names the
 * path, X-Survey-Ids the surveys drawn). So the lists follow what the server really does, not what
 * the benchmark guesses it does.
 *
 * - pass-through: tiles drawn from the older survey alone, sent as stored. nginx serves these exact
 *   bytes from disk; the GDAL contenders render the same z/x/y from the older survey's COG.
 * - composite: tiles drawn from both surveys (newer on top, older where it has holes), in jpg and png.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ORIGIN_SHIFT, type TileCoord } from '../../src/geo/web-mercator.js';
import type { TileData } from './data.js';

export interface TileLists {
  passThrough: TileCoord[];
  composite: TileCoord[];
  /** ETag of each pass-through tile's jpg URL, keyed `z/x/y`. */
  etags: Record<string, string>;
  /** What the scan saw, for the report. */
  scan: { zooms: number[]; requested: number; answered: number; passThrough: number; composite: number };
  /** Median body sizes, bytes. */
  medianBytes: { passThrough: number; compositeJpg: number; compositePng: number };
}

export type TileFormat = 'jpg' | 'png';

export function nadirTileUrl(base: string, apiKey: string, t: TileCoord, format: TileFormat): string {
  return `${base}/tiles/v3/Vert/${t.z}/${t.x}/${t.y}.${format}?apikey=${apiKey}`;
}

interface Answer {
  tile: TileCoord;
  status: number;
  passThrough: boolean;
  surveyIds: string[];
  etag: string;
  body: Buffer;
}

async function ask(url: string, tile: TileCoord): Promise<Answer> {
  const response = await fetch(url);
  const body = Buffer.from(await response.arrayBuffer());
  const timing = response.headers.get('server-timing') ?? '';
  return {
    tile,
    status: response.status,
    passThrough: /\bpassthrough;dur=0\b/.test(timing),
    surveyIds: (response.headers.get('x-survey-ids') ?? '').split(',').filter(Boolean),
    etag: response.headers.get('etag') ?? '',
    body,
  };
}

/** `work` over `items`, `concurrency` at a time, results in order. */
export async function pool<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

export function tilesIn(bounds: TileData['older']['bounds'], z: number): TileCoord[] {
  const size = (2 * ORIGIN_SHIFT) / 2 ** z;
  // A hair inside the bounds: they are tile edges, which would otherwise count the next tile too.
  const x0 = Math.floor((bounds.minX + ORIGIN_SHIFT) / size + 1e-6);
  const x1 = Math.floor((bounds.maxX + ORIGIN_SHIFT) / size - 1e-6);
  const y0 = Math.floor((ORIGIN_SHIFT - bounds.maxY) / size + 1e-6);
  const y1 = Math.floor((ORIGIN_SHIFT - bounds.minY) / size - 1e-6);
  const tiles: TileCoord[] = [];
  for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) tiles.push({ z, x, y });
  return tiles;
}

/** `count` items spread evenly over `items` (all of them when there are fewer). */
function spread<T>(items: T[], count: number): T[] {
  if (items.length <= count) return items;
  return Array.from({ length: count }, (_, i) => items[Math.floor((i * items.length) / count)] as T);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const key = (t: TileCoord) => `${t.z}/${t.x}/${t.y}`;

/** Scans, picks up to `maxTiles` of each kind, and writes the pass-through bytes to `<root>/{z}/{x}/{y}.jpg`. */
export async function findTileLists(
  nadirUrl: string,
  data: TileData,
  root: string,
  maxTiles: number,
): Promise<TileLists> {
  const { older, newer, apiKey } = data;
  const zooms = [older.maxZoom, older.maxZoom - 1, older.maxZoom - 2];
  const tiles = zooms.flatMap((z) => tilesIn(older.bounds, z));
  const answers = await pool(tiles, 8, (t) => ask(nadirTileUrl(nadirUrl, apiKey, t, 'jpg'), t));
  const bad = answers.filter((a) => a.status !== 200 && a.status !== 404);
  if (bad.length > 0) throw new Error(`tile scan: ${bad.length} answers neither 200 nor 404, e.g. ${bad[0]?.status}`);
  const ok = answers.filter((a) => a.status === 200);
  const passAll = ok.filter((a) => a.passThrough && a.surveyIds.join() === older.id);
  const compAll = ok.filter((a) => !a.passThrough && a.surveyIds.join() === `${newer.id},${older.id}`);
  const passThrough = spread(passAll, maxTiles);
  const composite = spread(compAll, maxTiles);
  if (passThrough.length < 50 || composite.length < 50) {
    throw new Error(`too few tiles: ${passThrough.length} pass-through, ${composite.length} composite`);
  }

  const pngs = await pool(composite, 8, (a) => ask(nadirTileUrl(nadirUrl, apiKey, a.tile, 'png'), a.tile));
  const notTwo = pngs.filter((a) => a.status !== 200 || a.surveyIds.length !== 2);
  if (notTwo.length > 0) throw new Error(`${notTwo.length} composite tiles as png are not 200 with two surveys`);

  await rm(root, { recursive: true, force: true });
  for (const a of passThrough) {
    await mkdir(join(root, `${a.tile.z}`, `${a.tile.x}`), { recursive: true });
    await writeFile(join(root, `${a.tile.z}`, `${a.tile.x}`, `${a.tile.y}.jpg`), a.body);
  }
  return {
    passThrough: passThrough.map((a) => a.tile),
    composite: composite.map((a) => a.tile),
    etags: Object.fromEntries(passThrough.map((a) => [key(a.tile), a.etag])),
    scan: {
      zooms,
      requested: tiles.length,
      answered: ok.length,
      passThrough: passAll.length,
      composite: compAll.length,
    },
    medianBytes: {
      passThrough: median(passThrough.map((a) => a.body.length)),
      compositeJpg: median(composite.map((a) => a.body.length)),
      compositePng: median(pngs.map((a) => a.body.length)),
    },
  };
}
