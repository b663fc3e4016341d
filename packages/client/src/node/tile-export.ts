/**
 * Exports the tiles of a box and zoom range into an MBTiles file, or a PMTiles archive, for QGIS
 * and MapLibre, at any size a city takes. Before the start, one tile is fetched to learn the
 * key's rate limit and a tile's size, and the plan (tiles, bytes, time) goes to `onPlan`, which
 * may stop it. Tiles are committed to an MBTiles file as they arrive, so a killed export resumes
 * where it stopped: straight into `<out>.mbtiles`, or for PMTiles into `<out>.part.mbtiles`,
 * which becomes the archive once every tile is in (pmtiles-writer.ts, in bounded memory). The
 * requests are paced below the rate limit (tile-pacer.ts); the tiles are walked lazily, so a
 * million-tile export holds no list of them.
 */
import { rename, rm, stat } from 'node:fs/promises';
import type { BBox } from '../area.js';
import type { NadirClient, TileAnswer } from '../client.js';
import type { TileXYZ } from '../panorama.js';
import type { DateFilters, TagFilters } from '../query.js';
import { type TileRange, tileCount, tileRange, tilesOf } from '../tile-grid.js';
import { DEFAULT_PACE_SHARE, pacedRate, TilePacer } from '../tile-pacer.js';
import type { TileType } from '../types.js';
import { type Clock, type Sleep, timerSleep } from '../waiting.js';
import { MbtilesStore } from './mbtiles-store.js';
import { writePmtiles } from './pmtiles-writer.js';

export interface TileExportOptions extends DateFilters, TagFilters {
  bbox: BBox;
  minZoom: number;
  maxZoom: number;
  type: TileType;
  /** png keeps transparency where there is no imagery; jpg is smaller. */
  format: 'png' | 'jpg';
  /** A path ending in .mbtiles or .pmtiles. */
  out: string;
  surveyId?: string;
  /** Requests in flight at once. */
  concurrency?: number;
  /** The share of the key's rate limit the export uses (default 0.8: a fifth left for the key's other users). */
  paceShare?: number;
  signal?: AbortSignal;
  clock?: Clock;
  sleep?: Sleep;
  /** The plan, before anything is written: return false to stop there (nothing written). */
  onPlan?: (plan: TileExportPlan) => boolean | Promise<boolean>;
  /** After each tile: how many of the total are done (resumed ones included). */
  onProgress?: (done: number, total: number) => void;
  /** The pacer holds the next request back this long (a second or more): the export's share of the window is used. */
  onWait?: (ms: number) => void;
}

export interface TileExportPlan {
  out: string;
  /** Tiles in the box and zooms. */
  total: number;
  /** Fetched by an earlier, interrupted run of the same export. */
  alreadyFetched: number;
  pending: number;
  /** Bytes of a tile with imagery: the earlier run's mean, else the first tile's; undefined when neither had imagery. */
  bytesPerTile: number | undefined;
  /** What the finished file weighs at most: every tile still to fetch counted as having imagery. */
  estimatedBytes: number | undefined;
  /** At `tilesPerSecond`; undefined without a rate-limit header. */
  estimatedSeconds: number | undefined;
  /** The pace of the estimate: the paced rate, or the server's pace for the samples if slower. */
  tilesPerSecond: number | undefined;
  /** The key's limit per window, from X-RateLimit-Limit. */
  rateLimit: number | undefined;
}

export interface TileExportResult {
  out: string;
  /** Tiles in the box and zooms. */
  total: number;
  /** Tiles with imagery, now in the file. */
  written: number;
  /** Tiles fetched in this run (the rest came from an earlier, interrupted one). */
  fetched: number;
  /** Of all the tiles, those the server had no imagery for. */
  withoutImagery: number;
  /** The output file's size (an unfinished or stopped export: 0). */
  bytes: number;
  seconds: number;
  /** False when onPlan stopped it. */
  started: boolean;
}

export function exportKind(out: string): 'mbtiles' | 'pmtiles' {
  if (out.endsWith('.mbtiles')) return 'mbtiles';
  if (out.endsWith('.pmtiles')) return 'pmtiles';
  throw new RangeError(`the output must end in .mbtiles or .pmtiles, got ${out}`);
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** What the export's file records, so a resume with other parameters is refused. */
function exportParameters(client: NadirClient, options: TileExportOptions): string {
  const { west, south, east, north } = options.bbox;
  return JSON.stringify({
    server: client.baseUrl,
    type: options.type,
    format: options.format,
    surveyId: options.surveyId ?? null,
    since: options.since ?? null,
    until: options.until ?? null,
    include: options.include ?? null,
    exclude: options.exclude ?? null,
    bbox: [west, south, east, north],
    zoom: [options.minZoom, options.maxZoom],
  });
}

function mbtilesMetadata(client: NadirClient, options: TileExportOptions, parameters: string) {
  const { west, south, east, north } = options.bbox;
  return {
    name: `nadir ${options.type}`,
    format: options.format,
    bounds: `${west},${south},${east},${north}`,
    center: `${(west + east) / 2},${(south + north) / 2},${options.maxZoom}`,
    minzoom: options.minZoom,
    maxzoom: options.maxZoom,
    type: 'overlay',
    version: '1.3',
    description: `${options.type} tiles exported from ${client.baseUrl} by nadir-client`,
    nadir_export: parameters,
  };
}

export async function exportTiles(client: NadirClient, options: TileExportOptions): Promise<TileExportResult> {
  const kind = exportKind(options.out);
  const clock = options.clock ?? Date.now;
  const started = clock();
  const ranges: TileRange[] = [];
  for (let z = options.minZoom; z <= options.maxZoom; z++) ranges.push(tileRange(options.bbox, z));
  const total = ranges.reduce((sum, range) => sum + tileCount(range), 0);
  const working = kind === 'mbtiles' ? options.out : `${options.out}.part.mbtiles`;
  if (kind === 'pmtiles' && (await exists(options.out))) {
    throw new Error(`${options.out} exists; remove it to export again`);
  }
  const parameters = exportParameters(client, options);
  const signal = options.signal ? { signal: options.signal } : {};
  const pacer = new TilePacer(() => client.rateLimit, clock, options.sleep ?? timerSleep, {
    share: options.paceShare ?? DEFAULT_PACE_SHARE,
    ...(options.onWait ? { onWait: options.onWait } : {}),
  });
  const fetchTile = async (tile: TileXYZ): Promise<TileAnswer | undefined> => {
    await pacer.turn(options.signal);
    try {
      return await client.tile(
        {
          type: options.type,
          tile,
          format: options.format,
          ...(options.surveyId === undefined ? {} : { surveyId: options.surveyId }),
          ...(options.since === undefined ? {} : { since: options.since }),
          ...(options.until === undefined ? {} : { until: options.until }),
          ...(options.include === undefined ? {} : { include: options.include }),
          ...(options.exclude === undefined ? {} : { exclude: options.exclude }),
        },
        signal,
      );
    } finally {
      pacer.answered();
    }
  };

  // An earlier run's file is opened to count what it has; a new one is made only once the plan is agreed.
  let store = (await exists(working)) ? new MbtilesStore(working) : undefined;
  try {
    const earlier = store?.metadata('nadir_export');
    if (earlier !== undefined && earlier !== parameters) {
      throw new Error(`${working} holds an export with other parameters (${earlier}); choose another file`);
    }
    const tiles = tilesOf(ranges)[Symbol.iterator]();
    const nextPending = (): TileXYZ | undefined => {
      for (let next = tiles.next(); !next.done; next = tiles.next()) if (!store?.has(next.value)) return next.value;
      return undefined;
    };
    const resumed = store?.progress() ?? { fetched: 0, bytes: 0, written: 0 };
    // The plan's samples, the rate limit, a tile's size and the server's pace from the server
    // itself: the middle tiles of the finest zooms, the likeliest to have imagery (the finest may
    // be past the surveys' own zoom); the walk skips them once they are stored. The pace is the
    // quickest sample's: the first pays for the connection and the server's cold start.
    const samples: { tile: TileXYZ; answer: TileAnswer | undefined }[] = [];
    let sampleMs = Number.POSITIVE_INFINITY;
    for (const tile of sampleTiles(ranges, store, nextPending)) {
      const sent = clock();
      samples.push({ tile, answer: await fetchTile(tile) });
      sampleMs = Math.min(sampleMs, clock() - sent);
    }
    const withImagery = samples.flatMap((sample) => (sample.answer ? [sample.answer.bytes.length] : []));
    const sampleBytes =
      withImagery.length > 0 ? withImagery.reduce((sum, bytes) => sum + bytes, 0) / withImagery.length : undefined;
    const plan = planOf(options, total, resumed, sampleBytes, client, clock(), sampleMs);
    if (options.onPlan && !(await options.onPlan(plan))) {
      return {
        out: options.out,
        total,
        written: 0,
        fetched: 0,
        withoutImagery: 0,
        bytes: 0,
        seconds: 0,
        started: false,
      };
    }
    store ??= new MbtilesStore(working);
    const opened = store;
    opened.setMetadata(mbtilesMetadata(client, options, parameters));
    let fetched = 0;
    let done = resumed.fetched;
    const keep = (tile: TileXYZ, answer: TileAnswer | undefined) => {
      if (answer) opened.put(tile, answer.bytes);
      else opened.markEmpty(tile);
      fetched++;
      options.onProgress?.(++done, total);
    };
    options.onProgress?.(done, total);
    for (const sample of samples) keep(sample.tile, sample.answer);
    const worker = async () => {
      for (let tile = nextPending(); tile; tile = nextPending()) keep(tile, await fetchTile(tile));
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 4, plan.pending)) }, worker));
    const { written, fetched: all } = opened.progress();
    let bytes = (await stat(working)).size;
    if (kind === 'pmtiles') {
      const temporary = `${options.out}.tmp`;
      bytes = await writePmtiles(temporary, {
        format: options.format,
        bounds: options.bbox,
        minZoom: options.minZoom,
        maxZoom: options.maxZoom,
        metadata: {
          name: `nadir ${options.type}`,
          description: 'exported by nadir-client',
          nadir_export: JSON.parse(parameters),
        },
        tiles: opened.tilesInTileIdOrder(),
      });
      await rename(temporary, options.out);
    }
    const seconds = (clock() - started) / 1000;
    return { out: options.out, total, written, fetched, withoutImagery: all - written, bytes, seconds, started: true };
  } finally {
    store?.close();
    if (kind === 'pmtiles' && (await exists(options.out))) await rm(working, { force: true });
  }
}

/** Tiles fetched for the plan (kept for the export): the middles of the three finest zooms. */
const MAX_SAMPLES = 3;

/** The middle tiles of the finest zooms an earlier run does not have, else the walk's first. */
function sampleTiles(
  ranges: TileRange[],
  store: MbtilesStore | undefined,
  nextPending: () => TileXYZ | undefined,
): TileXYZ[] {
  const middles = ranges
    .map((range) => ({
      z: range.z,
      x: Math.floor((range.minX + range.maxX) / 2),
      y: Math.floor((range.minY + range.maxY) / 2),
    }))
    .reverse()
    .filter((tile) => !store?.has(tile))
    .slice(0, MAX_SAMPLES);
  if (middles.length > 0) return middles;
  const first = nextPending();
  return first ? [first] : [];
}

function planOf(
  options: TileExportOptions,
  total: number,
  resumed: { fetched: number; bytes: number; written: number },
  sampleBytes: number | undefined,
  client: NadirClient,
  now: number,
  sampleMs: number,
): TileExportPlan {
  const pending = total - resumed.fetched;
  const bytesPerTile = resumed.written > 0 ? resumed.bytes / resumed.written : sampleBytes;
  const state = client.rateLimit;
  const paced = state ? pacedRate(state, now, undefined, options.paceShare) : undefined;
  // The server's own pace: the quickest sample's time, as many at once as the concurrency.
  const served = sampleMs > 0 && Number.isFinite(sampleMs) ? ((options.concurrency ?? 4) * 1000) / sampleMs : undefined;
  const rate = paced === undefined ? undefined : Math.min(paced, served ?? paced);
  return {
    out: options.out,
    total,
    alreadyFetched: resumed.fetched,
    pending,
    bytesPerTile,
    estimatedBytes: bytesPerTile === undefined ? undefined : resumed.bytes + pending * bytesPerTile,
    estimatedSeconds: rate === undefined ? undefined : pending / rate,
    tilesPerSecond: rate,
    rateLimit: state?.limit,
  };
}
