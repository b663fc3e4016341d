/**
 * The cold part's tile list, found by asking nadir (as tile-lists.ts does): every tile of the
 * older survey from z18 to its highest zoom with imagery, once, as jpg; the composites are the answers
 * Server-Timing calls `composite` and X-Survey-Ids says were drawn from both surveys, newer first.
 * The list is then shuffled (seeded), so neighbouring requests in a round are not neighbouring
 * tiles, as a CDN's misses are not.
 */
import type { TileCoord } from '../../src/geo/web-mercator.js';
import { nadirTileUrl, pool, tilesIn } from './tile-lists.js';

export interface ColdSurveys {
  apiKey: string;
  older: { id: string; minZoom: number; maxZoom: number; bounds: Parameters<typeof tilesIn>[0] };
  newer: { id: string };
}

export interface ColdList {
  composite: TileCoord[];
  scan: { zooms: number[]; requested: number; answered: number; composite: number };
}

/** A seeded shuffle (mulberry32 steps), the same order every run. */
export function shuffled<T>(items: readonly T[], seed = 19): T[] {
  const out = [...items];
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * Scans z`fromZoom` over the survey's COG bounds (grid-aligned to its minimum zoom, so mostly
 * empty around the imagery), then each zoom below only under the tiles that had imagery.
 */
export async function findColdList(nadirUrl: string, data: ColdSurveys, fromZoom = 18): Promise<ColdList> {
  const { older, newer, apiKey } = data;
  const zooms: number[] = [];
  for (let z = Math.max(fromZoom, older.minZoom); z <= older.maxZoom; z++) zooms.push(z);
  let tiles = tilesIn(older.bounds, zooms[0] as number);
  let requested = 0;
  const ok: { tile: TileCoord; composite: boolean; ids: string }[] = [];
  for (const z of zooms) {
    if (z !== zooms[0]) {
      tiles = ok
        .filter((a) => a.tile.z === z - 1)
        .flatMap(({ tile: { x, y } }) => [0, 1, 2, 3].map((i) => ({ z, x: 2 * x + (i & 1), y: 2 * y + (i >> 1) })));
    }
    requested += tiles.length;
    const answers = await pool(tiles, 8, async (tile) => {
      const response = await fetch(nadirTileUrl(nadirUrl, apiKey, tile, 'jpg'));
      await response.arrayBuffer();
      const timing = response.headers.get('server-timing') ?? '';
      const ids = response.headers.get('x-survey-ids') ?? '';
      return { tile, status: response.status, composite: /\bcomposite;dur=0\b/.test(timing), ids };
    });
    const bad = answers.filter((a) => a.status !== 200 && a.status !== 404);
    if (bad.length > 0) throw new Error(`cold scan: ${bad.length} answers neither 200 nor 404, e.g. ${bad[0]?.status}`);
    ok.push(...answers.filter((a) => a.status === 200));
  }
  const composite = ok.filter((a) => a.composite && a.ids === `${newer.id},${older.id}`).map((a) => a.tile);
  return {
    composite: shuffled(composite),
    scan: { zooms, requested, answered: ok.length, composite: composite.length },
  };
}
