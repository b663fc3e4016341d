/**
 * DsmChange map tiles: two DSM reads on the tile's grid (the raster engine's height change, the
 * same warp and subtraction as a DsmChange.tif), coloured with the download's diverging ramp,
 * transparent where unchanged within the threshold or where either survey has no height, and
 * encoded by the tile encoder. A core of its own beside tile-responder.ts: the hot tile path
 * (pass-through and composites of stored JPEG tiles) stays as it is.
 */
import type { ApiKeyLookup } from '../accounts/index.js';
import { usageMonthOf } from '../accounts/index.js';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import type { Clock } from '../clock.js';
import { tileGrid } from '../geo/aoi-grid.js';
import { DSM_NODATA } from '../geo/asset-layout.js';
import { boxIntersectsMultiPolygon } from '../geo/polygon.js';
import { tileBounds } from '../geo/web-mercator.js';
import { CHANGE_RAMP, changeColour, type RasterEngine } from '../raster/index.js';
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
import { type ChangePair, type DsmSurvey, MAX_PAIR_CANDIDATES, pairById } from './change-pair.js';
import type { ChangeTileQuery } from './change-tile-query.js';

export interface ChangeTileParts {
  catalogue: Pick<SurveyCatalogue, 'get' | 'search'>;
  raster: Pick<RasterEngine, 'heightChangeOn'>;
  /** Where served tiles are counted for `nadir accounts usage` (as every tile). */
  usage: { count(accountId: string, month: string): void };
  clock: Clock;
}

/** Colours are looked up per centimetre of change over the ramp's span; beyond it the ends hold. */
const STEPS_PER_METRE = 100;

export class ChangeTiles {
  readonly #parts: ChangeTileParts;
  /** RGB per centimetre from the ramp's first stop to its last. */
  readonly #colours: Uint8Array;
  readonly #lowest: number;
  readonly #version: string;

  constructor(parts: ChangeTileParts) {
    this.#parts = parts;
    const first = CHANGE_RAMP[0]?.metres ?? 0;
    const last = CHANGE_RAMP[CHANGE_RAMP.length - 1]?.metres ?? 0;
    const steps = Math.round((last - first) * STEPS_PER_METRE) + 1;
    this.#colours = new Uint8Array(steps * 3);
    for (let i = 0; i < steps; i++) this.#colours.set(changeColour(first + i / STEPS_PER_METRE), i * 3);
    this.#lowest = first;
    // ETags change with the ramp and the encoder.
    this.#version = `${JSON.stringify(CHANGE_RAMP)}|${ENCODING_VERSION}`;
  }

  async answer(caller: ApiKeyLookup, query: ChangeTileQuery, conditions: TileConditions): Promise<DrawnTileAnswer> {
    const { tile } = query;
    const pair = await this.#pair(query);
    const dsm = pair.after.assets.DetailDsm;
    if (tile.z > dsm.maxZoom || tile.z < dsm.minZoom - MAX_UNDERZOOM) throw noImagery(tile);
    const area = lonLatBox(tileBounds(tile));
    for (const survey of [pair.after, pair.baseline]) {
      if (!boxIntersectsMultiPolygon(area, survey.footprint)) throw noImagery(tile);
    }
    const maxAge = query.after === undefined ? LOCATION_MAX_AGE : SURVEY_MAX_AGE;
    const headers = [
      'etag',
      this.#etag(pair, query.threshold),
      'cache-control',
      cacheControlOf(conditions.keyInUrl, maxAge),
    ];
    if (matchesIfNoneMatch(conditions.ifNoneMatch, headers[1] as string))
      return { status: 304, headers, body: undefined };

    const change = await this.#parts.raster.heightChangeOn(dsm, pair.baseline.assets.DetailDsm, tileGrid(tile));
    if (change.compared === 0) throw noImagery(tile);
    const body = await encodeTile(this.#colour(change.change, query.threshold), false, 'png', 0);
    this.#parts.usage.count(caller.account.id, usageMonthOf(this.#parts.clock()));
    headers.push('content-type', 'image/png', 'x-survey-ids', `${pair.after.id},${pair.baseline.id}`);
    return { status: 200, headers, body };
  }

  /** The explicit pair, or the newest and oldest surveys with DetailDsm the filters select over the tile. */
  async #pair(query: ChangeTileQuery): Promise<ChangePair> {
    const area = lonLatBox(tileBounds(query.tile));
    if (query.after !== undefined) return pairById(this.#parts.catalogue, query.after, query.baseline, area, 'after');
    const { surveys } = await this.#parts.catalogue.search({
      area,
      types: ['DetailDsm'],
      since: query.since,
      until: query.until,
      tags: query.tags,
      order: 'newest',
      limit: MAX_PAIR_CANDIDATES,
      offset: 0,
    });
    if (surveys.length < 2) throw noImagery(query.tile);
    return { after: surveys[0] as DsmSurvey, baseline: surveys[surveys.length - 1] as DsmSurvey };
  }

  #etag(pair: ChangePair, threshold: number): string {
    const { after, baseline } = pair;
    const seed = `${after.id}@${after.version}|${baseline.id}@${baseline.version}|${threshold}|${this.#version}`;
    return etagOfSeed(seed);
  }

  /** RGBA: the ramp's colour where the height changed by more than the threshold, else transparent. */
  #colour(change: Float32Array, threshold: number): Uint8Array {
    const rgba = new Uint8Array(change.length * 4);
    const colours = this.#colours;
    const last = colours.length / 3 - 1;
    for (let i = 0; i < change.length; i++) {
      const d = change[i] as number;
      if (d === DSM_NODATA || !(Math.abs(d) > threshold)) continue;
      const step = Math.min(last, Math.max(0, Math.round((d - this.#lowest) * STEPS_PER_METRE))) * 3;
      const at = i * 4;
      rgba[at] = colours[step] as number;
      rgba[at + 1] = colours[step + 1] as number;
      rgba[at + 2] = colours[step + 2] as number;
      rgba[at + 3] = 255;
    }
    return rgba;
  }
}
