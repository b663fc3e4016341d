/**
 * Which Web Mercator tiles (Google/XYZ numbering) a lon/lat box touches at a zoom: what a tile
 * export fetches. Pure math, browser-safe.
 */
import { type BBox, checkBBox, MAX_LATITUDE } from './area.js';
import { NadirUsageError } from './errors.js';
import { MAX_ZOOM, type TileXYZ } from './panorama.js';

export interface TileRange {
  z: number;
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

function tileX(lon: number, z: number): number {
  return Math.min(2 ** z - 1, Math.max(0, Math.floor(((lon + 180) / 360) * 2 ** z)));
}

function tileY(lat: number, z: number): number {
  const clamped = Math.max(-MAX_LATITUDE, Math.min(MAX_LATITUDE, lat));
  const sin = Math.sin((clamped * Math.PI) / 180);
  const y = (0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * 2 ** z;
  return Math.min(2 ** z - 1, Math.max(0, Math.floor(y)));
}

/** The tiles of zoom z that the box touches (a box edge exactly on a tile edge touches only the inner tile's neighbour). */
export function tileRange(bbox: BBox, z: number): TileRange {
  checkBBox(bbox);
  if (!(Number.isInteger(z) && z >= 0 && z <= MAX_ZOOM))
    throw new NadirUsageError(`zoom must be 0..${MAX_ZOOM}, got ${z}`);
  return {
    z,
    minX: tileX(bbox.west, z),
    maxX: tileX(bbox.east, z),
    minY: tileY(bbox.north, z),
    maxY: tileY(bbox.south, z),
  };
}

export function tileCount(range: TileRange): number {
  return (range.maxX - range.minX + 1) * (range.maxY - range.minY + 1);
}

/** Every tile of the ranges, zoom by zoom, row by row. */
export function* tilesOf(ranges: TileRange[]): Generator<TileXYZ> {
  for (const { z, minX, minY, maxX, maxY } of ranges) {
    for (let y = minY; y <= maxY; y++) for (let x = minX; x <= maxX; x++) yield { z, x, y };
  }
}

/** `18-20` or `19`: the zooms of an export. */
export function parseZoomRange(text: string): { min: number; max: number } {
  const match = /^\s*(\d{1,2})\s*(?:-\s*(\d{1,2})\s*)?$/.exec(text);
  const min = match ? Number(match[1]) : Number.NaN;
  const max = match?.[2] === undefined ? min : Number(match[2]);
  if (!(min >= 0 && max <= MAX_ZOOM && min <= max)) {
    throw new NadirUsageError(`zoom must be Z or MIN-MAX within 0..${MAX_ZOOM}, got ${JSON.stringify(text)}`);
  }
  return { min, max };
}
