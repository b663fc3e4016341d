/**
 * Exports the tiles of a box and zoom range into an MBTiles file, or a PMTiles archive, for QGIS
 * and MapLibre. Tiles are committed to an MBTiles file as they arrive, so a killed export resumes
 * where it stopped: straight into `<out>.mbtiles`, or for PMTiles into `<out>.part.mbtiles`, which
 * becomes the archive once every tile is in. Paced by the rate limit: the client waits for the
 * window's reset once the server says none is left, and waits out any 429.
 */
import { rename, rm, stat } from 'node:fs/promises';
import type { BBox } from '../area.js';
import type { NadirClient } from '../client.js';
import type { DateFilters, TagFilters } from '../query.js';
import { type TileRange, tileCount, tileRange, tilesOf } from '../tile-grid.js';
import type { TileType } from '../types.js';
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
  signal?: AbortSignal;
  /** After each tile: how many of the total are done (resumed ones included). */
  onProgress?: (done: number, total: number) => void;
}

export interface TileExportResult {
  out: string;
  /** Tiles in the box and zooms. */
  total: number;
  /** Tiles with imagery, now in the file. */
  written: number;
  /** Tiles fetched in this run (the rest came from an earlier, interrupted one). */
  fetched: number;
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

export async function exportTiles(client: NadirClient, options: TileExportOptions): Promise<TileExportResult> {
  const kind = exportKind(options.out);
  const ranges: TileRange[] = [];
  for (let z = options.minZoom; z <= options.maxZoom; z++) ranges.push(tileRange(options.bbox, z));
  const total = ranges.reduce((sum, range) => sum + tileCount(range), 0);
  const working = kind === 'mbtiles' ? options.out : `${options.out}.part.mbtiles`;
  if (kind === 'pmtiles' && (await exists(options.out))) {
    throw new Error(`${options.out} exists; remove it to export again`);
  }
  const { west, south, east, north } = options.bbox;
  const parameters = JSON.stringify({
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
  const store = new MbtilesStore(working);
  let fetched = 0;
  try {
    const earlier = store.metadata('nadir_export');
    if (earlier !== undefined && earlier !== parameters) {
      throw new Error(`${working} holds an export with other parameters (${earlier}); choose another file`);
    }
    store.setMetadata({
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
    });
    const pending = [...tilesOf(ranges)].filter((tile) => !store.has(tile));
    let done = total - pending.length;
    options.onProgress?.(done, total);
    const concurrency = options.concurrency ?? 4;
    const worker = async () => {
      for (let tile = pending.shift(); tile; tile = pending.shift()) {
        const answer = await client.tile(
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
          options.signal ? { signal: options.signal } : {},
        );
        if (answer) store.put(tile, answer.bytes);
        else store.markEmpty(tile);
        fetched++;
        options.onProgress?.(++done, total);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, pending.length)) }, worker));
    const written = store.tileCount();
    if (kind === 'pmtiles') {
      const temporary = `${options.out}.tmp`;
      await writePmtiles(temporary, {
        format: options.format,
        bounds: options.bbox,
        minZoom: options.minZoom,
        maxZoom: options.maxZoom,
        metadata: {
          name: `nadir ${options.type}`,
          description: `exported by nadir-client`,
          nadir_export: JSON.parse(parameters),
        },
        tiles: store.tiles(),
      });
      await rename(temporary, options.out);
    }
    return { out: options.out, total, written, fetched };
  } finally {
    store.close();
    if (kind === 'pmtiles' && (await exists(options.out))) await rm(working, { force: true });
  }
}
