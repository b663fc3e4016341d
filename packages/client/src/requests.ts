/**
 * The imagery and tile requests' paths and query parameters, checked before anything is sent,
 * and the transport the endpoint families' modules (gis.ts, stac.ts, change.ts) send through, so
 * they share the client's key handling, retries and rate-limit waits without reaching into it.
 */
import { type Aoi, checkAoi, pointParameter } from './area.js';
import { NadirUsageError } from './errors.js';
import { checkTile, type TileXYZ } from './panorama.js';
import {
  type DateFilters,
  dateFilterParameters,
  oneOf,
  type TagFilters,
  tagFilterParameters,
  tileType,
} from './query.js';
import {
  DSM_CHANGE_FORMATS,
  type DsmChangeFormat,
  IMAGERY_TYPES,
  type ImageryType,
  RASTER_FORMATS,
  type RasterFormat,
  TILE_FORMATS,
  type TileFormat,
  type TileType,
} from './types.js';

/** What client.ts lends the endpoint modules: one GET with the client's key, retries and waits. */
export interface Transport {
  readonly baseUrl: string;
  /** `url` is absolute (a link the server handed out) or a path under baseUrl. */
  get(url: string, params: URLSearchParams, withKey: boolean, signal?: AbortSignal): Promise<Response>;
  /** The key for URLs meant for other programs (map libraries, GIS clients): they cannot send a header. */
  readonly apiKey: string;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface ImageryRequest {
  surveyId: string;
  /** DsmChange: the height change from `baseline` to `surveyId` (on the DetailDsm grid). */
  type: ImageryType;
  /** `json` (the figures) is DsmChange's only. */
  format: RasterFormat | DsmChangeFormat;
  aoi: Aoi;
  /** Pixels per side, 1..5000 (nativeImageSize gives a type's native size; DsmChange: DetailDsm's). */
  size: number;
  /** DsmChange: the earlier survey; without it the server takes the newest earlier one with DetailDsm. */
  baseline?: string;
  /** DsmChange json: metres of change from which a pixel counts as lost or gained (server default 2). */
  threshold?: number;
}

export interface TileRequest extends DateFilters, TagFilters {
  type: TileType;
  tile: TileXYZ;
  format: TileFormat;
  /** One survey's tile (the tile-by-survey endpoint) instead of the newest imagery there. */
  surveyId?: string;
  /** Location tiles: oldest survey on top instead of the newest. */
  mosaic?: 'latest' | 'earliest';
}

const SURVEY_ID = /^[A-Za-z0-9._~-]{1,128}$/;

export function checkSurveyId(id: unknown, name = 'surveyId'): string {
  if (typeof id !== 'string' || !SURVEY_ID.test(id))
    throw new NadirUsageError(`${name} must be a survey id from coverage, got ${JSON.stringify(id)}`);
  return id;
}

export function checkThreshold(value: unknown): number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 100))
    throw new NadirUsageError(`threshold must be metres from 0 to 100, got ${value}`);
  return value;
}

export function imageryPath(request: ImageryRequest): string {
  const type = oneOf('type', request.type, IMAGERY_TYPES);
  const format =
    type === 'DsmChange'
      ? oneOf('format', request.format, DSM_CHANGE_FORMATS)
      : oneOf('format', request.format, RASTER_FORMATS);
  return `/staticmap/v2/surveys/${encodeURIComponent(checkSurveyId(request.surveyId))}/${type}.${format}`;
}

export function imageryParameters(request: ImageryRequest, token: string): URLSearchParams {
  const aoi = checkAoi(request.aoi);
  const size = request.size;
  if (!(Number.isInteger(size) && size >= 1 && size <= 5000))
    throw new NadirUsageError(`size must be a whole number from 1 to 5000, got ${size}`);
  const params = new URLSearchParams({
    transactionToken: token,
    point: pointParameter(aoi.point),
    radius: String(aoi.radius),
    size: `${size}x${size}`,
  });
  // Refused here rather than silently dropped: a baseline on a DetailDsm would be ignored by the server.
  if ((request.baseline !== undefined || request.threshold !== undefined) && request.type !== 'DsmChange')
    throw new NadirUsageError('baseline and threshold apply to DsmChange only');
  if (request.baseline !== undefined) {
    if (checkSurveyId(request.baseline, 'baseline') === request.surveyId)
      throw new NadirUsageError('baseline must be another survey than surveyId');
    params.set('baseline', request.baseline);
  }
  if (request.threshold !== undefined) params.set('threshold', String(checkThreshold(request.threshold)));
  return params;
}

export function tilePath(request: TileRequest): string {
  const type = tileType(request.type);
  const { z, x, y } = checkTile(request.tile);
  const format = oneOf('format', request.format, TILE_FORMATS);
  const survey =
    request.surveyId === undefined ? '' : `/surveys/${encodeURIComponent(checkSurveyId(request.surveyId))}`;
  return `/tiles/v3${survey}/${type}/${z}/${x}/${y}.${format}`;
}

export function tileParameters(request: TileRequest): URLSearchParams {
  const params = new URLSearchParams();
  dateFilterParameters(request, params);
  tagFilterParameters(request, params);
  if (request.mosaic !== undefined) {
    if (request.surveyId !== undefined)
      throw new NadirUsageError('mosaic applies to location tiles, not to one survey');
    params.set('mosaic', oneOf('mosaic', request.mosaic, ['latest', 'earliest']));
  }
  return params;
}
