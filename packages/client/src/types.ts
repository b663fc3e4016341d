/**
 * The API's shapes, taken from the types generated from the service's own OpenAPI document
 * (generated/openapi.ts), so a schema change the client does not follow fails its type check.
 */
import type { paths } from './generated/openapi.js';

type CoverageGet = paths['/staticmap/v2/coverage.json']['get'];
type DsmChangeGet = paths['/staticmap/v2/surveys/{surveyId}/DsmChange.{format}']['get'];
type LocationTileGet = paths['/tiles/v3/{contentType}/{z}/{x}/{file}']['get'];

/** GET /staticmap/v2/coverage.json's 200 body. */
export type CoverageResponse = CoverageGet['responses'][200]['content']['application/json'];
export type Survey = CoverageResponse['surveys'][number];
/** The query of a coverage call, apikey left out (the client adds it). */
export type CoverageQuery = CoverageGet['parameters']['query'];
export type LocationTileFilters = NonNullable<LocationTileGet['parameters']['query']>;
export type HealthResponse = paths['/health']['get']['responses'][200]['content']['application/json'];
export type ReadyResponse = paths['/ready']['get']['responses'][200]['content']['application/json'];
export type VersionResponse = paths['/version']['get']['responses'][200]['content']['application/json'];

/** Types the imagery endpoint renders (and coverage's `resources` checks). */
export const RASTER_TYPES = ['Vert', 'TrueOrtho', 'DetailDsm'] as const;
export type RasterType = (typeof RASTER_TYPES)[number];
/** What the imagery endpoint serves: the raster types and the change between two surveys' DetailDsm. */
export const IMAGERY_TYPES = [...RASTER_TYPES, 'DsmChange'] as const;
export type ImageryType = (typeof IMAGERY_TYPES)[number];
export const DSM_CHANGE_FORMATS = ['tif', 'jpg', 'png', 'jgw', 'pgw', 'tfw', 'json'] as const;
export type DsmChangeFormat = (typeof DSM_CHANGE_FORMATS)[number];
export const RASTER_FORMATS = ['tif', 'jpg', 'png', 'jgw', 'pgw', 'tfw'] as const;
export type RasterFormat = (typeof RASTER_FORMATS)[number];
/** Tile layers: Vert and the four panorama directions. */
export const TILE_TYPES = ['Vert', 'North', 'South', 'East', 'West'] as const;
export type TileType = (typeof TILE_TYPES)[number];
export const TILE_FORMATS = ['jpg', 'png', 'img'] as const;
export type TileFormat = (typeof TILE_FORMATS)[number];

// Compile-time checks that the lists above are the generated document's: a new type in the
// service's schema without one here (or the reverse) is a type error.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type PixelSizeKey = keyof NonNullable<Survey['pixelSizes']>;
type MaxZoomKey = keyof NonNullable<Survey['maxZoom']>;
const rasterTypesMatch: Same<RasterType, PixelSizeKey> = true;
const tileTypesMatch: Same<TileType | 'TrueOrtho' | 'DetailDsm', MaxZoomKey> = true;
const tileTypesMatchPath: Same<TileType, LocationTileGet['parameters']['path']['contentType']> = true;
const changeFormatsMatch: Same<DsmChangeFormat, DsmChangeGet['parameters']['path']['format']> = true;
void [changeFormatsMatch, rasterTypesMatch, tileTypesMatch, tileTypesMatchPath];

/**
 * `DsmChange.json`. Written here, not taken from the document: the service declares that answer
 * without a schema (its other formats are images), so docs/api.md "DsmChange" is the source.
 */
export interface DsmChangeFigures {
  after: { id: string; captureDate: string };
  baseline: { id: string; captureDate: string };
  /** [lon, lat] */
  point: [number, number];
  radius: number;
  size: number;
  /** Metres per pixel of the grid the figures were counted on. */
  groundResolution: number;
  threshold: number;
  /** m² */
  aoiArea: number;
  comparedArea: number;
  /** 0..1 */
  comparedShare: number;
  /** Pixels that fell by more than threshold: m² and m³. */
  loss: { area: number; volume: number };
  gain: { area: number; volume: number };
}
