/**
 * DetailDsm map tiles (a nadir extension, issue 34): colour relief, hillshade and Terrain-RGB
 * PNGs of the heights on the tile's grid, read by the raster engine exactly as a DetailDsm
 * download warps them (with a pixel of the neighbours around, height-styles.ts). A location tile
 * draws the newest survey with heights over it that the filters select, older ones filling where
 * it has none (up to MAX_LAYERS); a survey tile draws that survey. A core of its own beside
 * tile-responder.ts and change-tiles.ts: the hot path of stored JPEG tiles stays as it is.
 */
import type { ApiKeyLookup } from '../accounts/index.js';
import { usageMonthOf } from '../accounts/index.js';
import { LruCache } from '../cache/lru.js';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import type { DsmSurvey } from '../change/change-pair.js';
import type { Clock } from '../clock.js';
import { NadirError } from '../errors.js';
import { grownGrid, tileGrid } from '../geo/aoi-grid.js';
import { boxIntersectsMultiPolygon } from '../geo/polygon.js';
import { mercatorToLonLat, tileBounds } from '../geo/web-mercator.js';
import type { HeightRange, RasterEngine } from '../raster/index.js';
import { ENCODING_VERSION, encodeTile } from '../tiles/encode.js';
import { lonLatBox, MAX_UNDERZOOM } from '../tiles/planner.js';
import {
  cacheControlOf,
  type DrawnTileAnswer,
  etagOfSeed,
  LOCATION_MAX_AGE,
  matchesIfNoneMatch,
  noImagery,
  SURVEY_MAX_AGE,
  type TileConditions,
} from '../tiles/tile-headers.js';
import {
  BORDER,
  GROWN_SIZE,
  hasHeight,
  hillshadeTile,
  reliefTile,
  STYLES_VERSION,
  terrainRgbTile,
} from './height-styles.js';
import type { HeightTileQuery } from './height-tile-query.js';

/** Surveys read for one location tile at most: the newest, then older ones where it has no height. */
export const MAX_LAYERS = 4;
/** Surveys over a tile looked through for those layers. */
const MAX_CANDIDATES = 100;

export interface HeightTileParts {
  catalogue: Pick<SurveyCatalogue, 'get' | 'search'>;
  raster: Pick<RasterEngine, 'heightsOn' | 'heightRangeOf'>;
  /** Where served tiles are counted for `nadir accounts usage` (as every tile). */
  usage: { count(accountId: string, month: string): void };
  clock: Clock;
}

export class HeightTiles {
  readonly #parts: HeightTileParts;
  /** Each DSM's own height range, by file and version: the relief ramp's and the terrain's ground. */
  readonly #ranges = new LruCache<Promise<HeightRange | undefined>>({ maxEntries: 10_000 });

  constructor(parts: HeightTileParts) {
    this.#parts = parts;
  }

  async answer(caller: ApiKeyLookup, query: HeightTileQuery, conditions: TileConditions): Promise<DrawnTileAnswer> {
    const { tile } = query;
    const layers = await this.#layers(query);
    const newest = layers[0] as DsmSurvey;
    // The survey's own range colours relief and grounds Terrain-RGB; hillshade needs none.
    const range = query.style === 'hillshade' ? undefined : (query.range ?? (await this.#rangeOf(newest)));
    const maxAge = query.surveyId === undefined ? LOCATION_MAX_AGE : SURVEY_MAX_AGE;
    const etag = this.#etag(layers, query, range);
    const headers = ['etag', etag, 'cache-control', cacheControlOf(conditions.keyInUrl, maxAge)];
    if (matchesIfNoneMatch(conditions.ifNoneMatch, etag)) return { status: 304, headers, body: undefined };

    const grid = grownGrid(tileGrid(tile), BORDER);
    const heights = await this.#heights(layers, grid);
    if (heights === undefined) throw noImagery(tile);
    const [, latitude] = mercatorToLonLat(
      (grid.bounds.minX + grid.bounds.maxX) / 2,
      (grid.bounds.minY + grid.bounds.maxY) / 2,
    );
    const rgba =
      query.style === 'relief'
        ? reliefTile(heights, range ?? { min: 0, max: 0 })
        : query.style === 'hillshade'
          ? hillshadeTile(heights, grid.pixelWidth, latitude)
          : terrainRgbTile(heights, range?.min ?? 0);
    const body = await encodeTile(rgba, query.style === 'terrain-rgb', 'png', 0);
    this.#parts.usage.count(caller.account.id, usageMonthOf(this.#parts.clock()));
    headers.push('content-type', 'image/png', 'x-survey-ids', layers.map((survey) => survey.id).join(','));
    return { status: 200, headers, body };
  }

  /** The surveys drawn, newest first: one asked for, or those the filters select over the tile. */
  async #layers(query: HeightTileQuery): Promise<DsmSurvey[]> {
    const { tile } = query;
    const area = lonLatBox(tileBounds(tile));
    const drawable = (survey: DsmSurvey) => {
      const dsm = survey.assets.DetailDsm;
      return (
        tile.z <= dsm.maxZoom &&
        tile.z >= dsm.minZoom - MAX_UNDERZOOM &&
        boxIntersectsMultiPolygon(area, survey.footprint)
      );
    };
    if (query.surveyId !== undefined) {
      const { surveyId } = query;
      const survey = await this.#parts.catalogue.get(surveyId);
      if (!survey) throw new NadirError('SURVEY_NOT_FOUND', `No survey with id "${surveyId.slice(0, 64)}"`);
      if (!survey.assets.DetailDsm) throw new NadirError('CONTENT_NOT_FOUND', `Survey ${survey.id} has no DetailDsm`);
      if (!drawable(survey as DsmSurvey)) throw noImagery(tile);
      return [survey as DsmSurvey];
    }
    const { surveys } = await this.#parts.catalogue.search({
      area,
      types: ['DetailDsm'],
      since: query.since,
      until: query.until,
      tags: query.tags,
      order: 'newest',
      limit: MAX_CANDIDATES,
      offset: 0,
    });
    const layers = (surveys as DsmSurvey[]).filter(drawable).slice(0, MAX_LAYERS);
    if (layers.length === 0) throw noImagery(tile);
    return layers;
  }

  /** The newest heights over the grid, older layers filling where it has none; undefined if none has any. */
  async #heights(layers: DsmSurvey[], grid: ReturnType<typeof grownGrid>): Promise<Float32Array | undefined> {
    let heights: Float32Array | undefined;
    let missing = GROWN_SIZE * GROWN_SIZE;
    for (const survey of layers) {
      const layer = await this.#parts.raster.heightsOn(survey.assets.DetailDsm, grid);
      if (heights === undefined) {
        heights = layer;
        missing = 0;
        for (const height of heights) if (!hasHeight(height)) missing++;
      } else {
        for (let i = 0; i < heights.length; i++) {
          if (!hasHeight(heights[i] as number) && hasHeight(layer[i] as number)) {
            heights[i] = layer[i] as number;
            missing--;
          }
        }
      }
      if (missing === 0) break;
    }
    return heights === undefined || missing === heights.length ? undefined : heights;
  }

  #rangeOf(survey: DsmSurvey): Promise<HeightRange | undefined> {
    const dsm = survey.assets.DetailDsm;
    const key = `${dsm.uri}@${dsm.version}`;
    let range = this.#ranges.get(key);
    if (range === undefined) {
      range = this.#parts.raster.heightRangeOf(dsm);
      // A failed read (the store away) is not remembered.
      range.catch(() => this.#ranges.delete(key));
      this.#ranges.set(key, range);
    }
    return range;
  }

  #etag(layers: DsmSurvey[], query: HeightTileQuery, range: HeightRange | undefined): string {
    const surveys = layers.map((survey) => `${survey.id}@${survey.version}`).join(',');
    const seed = `${surveys}|${query.style}|${range?.min}|${range?.max}|${STYLES_VERSION}|${ENCODING_VERSION}`;
    return etagOfSeed(seed);
  }
}
