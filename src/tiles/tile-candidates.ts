/**
 * Which surveys may draw into a tile, in draw order. The catalogue is asked once per tile
 * NEIGHBOURHOOD (the ancestor tile a few zooms up, grown by a margin) and the answer is cached
 * until the catalogue changes: a map view asks for dozens of neighbouring tiles at once, and the
 * planner then tests each survey's footprint against each tile exactly, with the footprint margin
 * (planner.ts), so caching a wider answer never loses a survey.
 */
import { LruCache } from '../cache/lru.js';
import { OnceATurn } from '../cache/once-a-turn.js';
import type { SurveyCatalogue, TagFilter } from '../catalogue/catalogue.js';
import type { Survey, TileType } from '../catalogue/survey.js';
import { boxInsideMultiPolygon } from '../geo/polygon.js';
import { type Bounds, type TileCoord, tileBounds } from '../geo/web-mercator.js';
import { lonLatBox } from './planner.js';
import type { AssetCandidate } from './tile-renderer.js';

/** The neighbourhood is the ancestor this many zooms up: 16 x 16 tiles share one catalogue query. */
const NEIGHBOURHOOD_ZOOMS = 4;
/**
 * How far, in tiles of the requested zoom, the neighbourhood query reaches past the ancestor's
 * edges, so a survey whose footprint stops just short of the neighbourhood but within the planner's
 * footprint margin of an edge tile is still a candidate. The margin is 1/256 of the asset's larger
 * side; two tiles cover it for any asset up to 512 tiles (131,072 px) across at that zoom.
 */
const REACH_TILES = 2;
/** More surveys than this over one neighbourhood are not composited (the oldest are dropped). */
export const MAX_CANDIDATES = 1000;

export interface TileFilter {
  type: TileType;
  since?: string;
  until?: string;
  tags?: TagFilter;
  /** `newest` first (decisions.md) or `earliest` first (mosaic=earliest). */
  order: 'newest' | 'earliest';
}

function neighbourhoodOf(tile: TileCoord): { key: string; area: Bounds; core: Bounds } {
  const up = Math.min(NEIGHBOURHOOD_ZOOMS, tile.z);
  const ancestor = { z: tile.z - up, x: tile.x >> up, y: tile.y >> up };
  const box = tileBounds(ancestor);
  const reach = ((box.maxX - box.minX) / 2 ** up) * REACH_TILES;
  const area = lonLatBox({
    minX: box.minX - reach,
    minY: box.minY - reach,
    maxX: box.maxX + reach,
    maxY: box.maxY + reach,
  });
  return { key: `${tile.z}/${ancestor.x}/${ancestor.y}`, area, core: lonLatBox(box) };
}

function filterKey(filter: TileFilter): string {
  return JSON.stringify([
    filter.type,
    filter.since,
    filter.until,
    filter.tags?.include,
    filter.tags?.exclude,
    filter.order,
  ]);
}

export function candidateOf(survey: Survey, type: TileType): AssetCandidate | undefined {
  const asset = survey.assets[type];
  if (asset?.kind !== 'rgb') return undefined;
  return { surveyId: survey.id, version: asset.version, asset, footprint: survey.footprint };
}

export class TileCandidates {
  readonly #catalogue: SurveyCatalogue;
  readonly #cache: LruCache<Promise<AssetCandidate[]>>;
  #marker: string | undefined;
  readonly #changeMarker: OnceATurn<string>;

  constructor(catalogue: SurveyCatalogue, maxEntries: number) {
    this.#catalogue = catalogue;
    this.#cache = new LruCache({ maxEntries });
    this.#changeMarker = new OnceATurn(() => catalogue.changeMarker());
  }

  /** The catalogue's change marker, asked at most once per turn of the event loop. */
  marker(): string {
    return this.#changeMarker.get();
  }

  async find(tile: TileCoord, filter: TileFilter): Promise<AssetCandidate[]> {
    const marker = this.marker();
    if (marker !== this.#marker) {
      this.#cache.clear();
      this.#marker = marker;
    }
    const { key, area, core } = neighbourhoodOf(tile);
    const cacheKey = `${key}|${filterKey(filter)}`;
    let answer = this.#cache.get(cacheKey);
    if (!answer) {
      answer = this.#search(area, core, filter);
      this.#cache.set(cacheKey, answer);
      answer.catch(() => this.#cache.delete(cacheKey));
    }
    return answer;
  }

  async #search(area: Bounds, core: Bounds, filter: TileFilter): Promise<AssetCandidate[]> {
    const page = await this.#catalogue.search({
      area,
      since: filter.since,
      until: filter.until,
      types: [filter.type],
      tags: filter.tags,
      order: filter.order === 'earliest' ? 'oldest' : 'newest',
      limit: MAX_CANDIDATES,
      offset: 0,
    });
    // Surveys covering the whole neighbourhood (the usual case inside a survey) spare each of its
    // tiles the exact polygon test.
    return page.surveys.flatMap((survey) => {
      const candidate = candidateOf(survey, filter.type);
      if (!candidate) return [];
      return boxInsideMultiPolygon(core, survey.footprint) ? { ...candidate, interior: core } : candidate;
    });
  }
}
