import type { ShardSet } from '../geo/asset-layout.js';
import type { MultiPolygon } from '../geo/polygon.js';
import type { Bounds } from '../geo/web-mercator.js';

/** Raster products of the coverage/imagery API (spec: "Resources"). */
export const RASTER_TYPES = ['DetailDsm', 'TrueOrtho', 'Vert'] as const;
/** The spec's tile layers: vertical plus the four oblique panorama directions. */
export const SPEC_TILE_TYPES = ['Vert', 'North', 'South', 'East', 'West'] as const;
/**
 * Tile layers nadir adds beyond the spec (marked so in the OpenAPI document): TrueOrtho, the
 * usual product of a drone survey, drawn from its RGB COG exactly as Vert is.
 */
export const EXTENSION_TILE_TYPES = ['TrueOrtho'] as const;
export const TILE_TYPES = [...SPEC_TILE_TYPES, ...EXTENSION_TILE_TYPES] as const;
export const CONTENT_TYPES = ['Vert', 'TrueOrtho', 'DetailDsm', 'North', 'South', 'East', 'West'] as const;

export type RasterType = (typeof RASTER_TYPES)[number];
export type TileType = (typeof TILE_TYPES)[number];
export type ContentType = (typeof CONTENT_TYPES)[number];

export function isContentType(value: string): value is ContentType {
  return (CONTENT_TYPES as readonly string[]).includes(value);
}

/** One ingested raster of a survey: a grid-aligned EPSG:3857 COG. */
export interface Asset {
  type: ContentType;
  /**
   * Where the COG is: its key in the survey storage, `surveys/<id>/v3/TrueOrtho.tif` (storage.ts);
   * rows written before object storage hold an absolute `file://` URI.
   */
  uri: string;
  /** Ground sample distance of the source, metres per pixel on the ground. */
  gsd: number;
  /** Native zoom: the COG's full-resolution level on the GoogleMapsCompatible grid. */
  maxZoom: number;
  /** The coarsest zoom the COG's overviews serve. */
  minZoom: number;
  /** EPSG:3857 extent of the COG's pixels. */
  bounds: Bounds;
  width: number;
  height: number;
  /** 'rgb' (Byte RGB + mask, JPEG) or 'elevation' (Float32 + nodata). */
  kind: 'rgb' | 'elevation';
  /** Changes whenever the asset's pixels may change (the survey's version at ingest). */
  version: number;
  /**
   * Stored as shard COGs (geo/asset-layout.ts). Then `uri`, `minZoom` and the low zooms are the
   * low COG's, `bounds`, `width` and `height` span the shards at `maxZoom`.
   */
  shards?: ShardSet;
}

export interface Survey {
  id: string;
  /** Local date of capture at the survey location, `YYYY-MM-DD`. */
  captureDate: string;
  /** ISO 8601 UTC instants. */
  firstPhotoTime: string;
  lastPhotoTime: string;
  timezone?: string;
  /** `type` or `type:name`, e.g. `disaster:hurricane`. */
  tags: string[];
  /** Where any asset has valid pixels, WGS84. */
  footprint: MultiPolygon;
  /** Increments on every re-ingest of the same id. */
  version: number;
  assets: Partial<Record<ContentType, Asset>>;
  ingestedAt: string;
}
