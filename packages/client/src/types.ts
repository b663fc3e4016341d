/**
 * The API's shapes, taken from the types generated from the service's own OpenAPI document
 * (generated/openapi.ts), so a schema change the client does not follow fails its type check, and
 * the lists of names from the facts generated from the same document (generated/facts.ts).
 */
import { DSM_CHANGE_FORMATS, RASTER_FORMATS, RASTER_TYPES, TILE_FORMATS, TILE_TYPES } from './generated/facts.js';
import type { paths } from './generated/openapi.js';

type CoverageGet = paths['/staticmap/v2/coverage.json']['get'];
type DsmChangeGet = paths['/staticmap/v2/surveys/{surveyId}/DsmChange.{format}']['get'];
type LocationTileGet = paths['/tiles/v3/{contentType}/{z}/{x}/{y}.{format}']['get'];

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
export { RASTER_TYPES };
export type RasterType = (typeof RASTER_TYPES)[number];
/** What the imagery endpoint serves: the raster types and the change between two surveys' DetailDsm. */
export const IMAGERY_TYPES = [...RASTER_TYPES, 'DsmChange'] as const;
export type ImageryType = (typeof IMAGERY_TYPES)[number];
export { DSM_CHANGE_FORMATS };
export type DsmChangeFormat = (typeof DSM_CHANGE_FORMATS)[number];
/** The imagery endpoint's formats: a DsmChange's but its `json` figures (checked below). */
export { RASTER_FORMATS };
export type RasterFormat = (typeof RASTER_FORMATS)[number];
/** Tile layers: Vert and the four panorama directions. */
export { TILE_TYPES };
export type TileType = (typeof TILE_TYPES)[number];
export { TILE_FORMATS };
export type TileFormat = (typeof TILE_FORMATS)[number];

// Compile-time checks that the generated lists agree with the generated types (and the imagery
// formats with the DsmChange ones): a schema change that breaks one of them is a type error.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type PixelSizeKey = keyof NonNullable<Survey['pixelSizes']>;
type MaxZoomKey = keyof NonNullable<Survey['maxZoom']>;
const rasterTypesMatch: Same<RasterType, PixelSizeKey> = true;
const tileTypesMatch: Same<TileType | 'TrueOrtho' | 'DetailDsm', MaxZoomKey> = true;
const tileTypesMatchPath: Same<TileType, LocationTileGet['parameters']['path']['contentType']> = true;
const changeFormatsMatch: Same<DsmChangeFormat, DsmChangeGet['parameters']['path']['format']> = true;
const rasterFormatsMatch: Same<RasterFormat | 'json', DsmChangeFormat> = true;
void [changeFormatsMatch, rasterFormatsMatch, rasterTypesMatch, tileTypesMatch, tileTypesMatchPath];

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
