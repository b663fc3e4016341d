import { invalidParameter } from '../errors.js';
import { type Aoi, aoiMercatorBounds } from './aoi.js';
import { type Bounds, groundScale, mercatorToLonLat, TILE_SIZE, type TileCoord, tileBounds } from './web-mercator.js';

/** Largest image side the imagery endpoint renders (spec: "Maximum 5000x5000"). */
export const MAX_IMAGE_SIZE = 5000;

/** GDAL order: [originX, pixelWidth, rowRotation, originY, columnRotation, -pixelHeight]. */
export type GeoTransform = readonly [number, number, number, number, number, number];

/**
 * The pixel grid of one imagery response: `size` x `size` pixels exactly covering the AOI square
 * in EPSG:3857, north up. Every format (tif, jpg, png) and every world file of a request uses
 * this one grid.
 */
export interface AoiGrid {
  /** The AOI square in EPSG:3857 metres (`aoiMercatorBounds`). */
  bounds: Bounds;
  /** Pixels per side; the image is square. */
  size: number;
  /** EPSG:3857 metres per pixel, west-east and north-south. */
  pixelWidth: number;
  pixelHeight: number;
  /** Ground metres per pixel: 2 x radius / size (the spec's resolution rule). */
  groundResolution: number;
  geoTransform: GeoTransform;
}

/**
 * The grid for (AOI, size). Pixel sizes are taken as (max - min) / size of the bounds, which is
 * exactly what GDAL computes from `-te ... -ts size size`, so the world file and the GeoTIFF
 * written by the warper agree to the last bit rather than to rounding (the two are equal to
 * side / size mathematically).
 */
export function aoiGrid(aoi: Aoi, size: number): AoiGrid {
  assertSize(size);
  const bounds = aoiMercatorBounds(aoi);
  const pixelWidth = (bounds.maxX - bounds.minX) / size;
  const pixelHeight = (bounds.maxY - bounds.minY) / size;
  return {
    bounds,
    size,
    pixelWidth,
    pixelHeight,
    groundResolution: (2 * aoi.radius) / size,
    geoTransform: [bounds.minX, pixelWidth, 0, bounds.maxY, 0, -pixelHeight],
  };
}

/**
 * A map tile as a grid of the same kind: 256 x 256 pixels over the tile's bounds, so what renders
 * an AOI (a warp onto `-te -ts`) renders a tile. The ground resolution is taken at the tile's
 * centre latitude.
 */
export function tileGrid(tile: TileCoord): AoiGrid {
  const bounds = tileBounds(tile);
  const pixel = (bounds.maxX - bounds.minX) / TILE_SIZE;
  const [, lat] = mercatorToLonLat((bounds.minX + bounds.maxX) / 2, (bounds.minY + bounds.maxY) / 2);
  return {
    bounds,
    size: TILE_SIZE,
    pixelWidth: pixel,
    pixelHeight: pixel,
    groundResolution: pixel * groundScale(lat),
    geoTransform: [bounds.minX, pixel, 0, bounds.maxY, 0, -pixel],
  };
}

function assertSize(size: number): void {
  if (!Number.isInteger(size) || size < 1 || size > MAX_IMAGE_SIZE) {
    throw invalidParameter('size', `size must be an integer from 1 to ${MAX_IMAGE_SIZE}, got ${size}`);
  }
}

/** The same grid grown by `pixels` on every side (a tile's neighbours' edge, for slopes). */
export function grownGrid(grid: AoiGrid, pixels: number): AoiGrid {
  const { bounds: b, pixelWidth, pixelHeight } = grid;
  const bounds = {
    minX: b.minX - pixels * pixelWidth,
    minY: b.minY - pixels * pixelHeight,
    maxX: b.maxX + pixels * pixelWidth,
    maxY: b.maxY + pixels * pixelHeight,
  };
  return {
    ...grid,
    bounds,
    size: grid.size + 2 * pixels,
    geoTransform: [bounds.minX, pixelWidth, 0, bounds.maxY, 0, -pixelHeight],
  };
}

/**
 * Parses the `size` query parameter, `{width}x{height}`, which decisions.md requires to be
 * square and 1..5000. Returns the side. Plain decimal digits only: no sign, no leading zero, no
 * spaces, lower-case `x`, so one spelling means one thing.
 */
export function parseSize(raw: unknown): number {
  if (typeof raw !== 'string' || raw === '') {
    throw invalidParameter('size', 'size is required, as {width}x{height} in pixels, e.g. 1000x1000');
  }
  const match = /^(\d+)x(\d+)$/.exec(raw);
  if (!match) {
    throw invalidParameter('size', `size must be {width}x{height} in pixels, e.g. 1000x1000, got "${shorten(raw)}"`);
  }
  const [width, height] = [match[1] as string, match[2] as string];
  if (/^0\d/.test(width) || /^0\d/.test(height)) {
    throw invalidParameter('size', `size must not have leading zeros, got "${shorten(raw)}"`);
  }
  if (width !== height) {
    throw invalidParameter('size', `size must be square (width equal to height), got "${shorten(raw)}"`);
  }
  const side = Number(width);
  if (side < 1 || side > MAX_IMAGE_SIZE) {
    throw invalidParameter(
      'size',
      `size must be from 1x1 to ${MAX_IMAGE_SIZE}x${MAX_IMAGE_SIZE}, got "${shorten(raw)}"`,
    );
  }
  return side;
}

function shorten(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

/**
 * Significant digits of world-file numbers. 15: at |x| up to 2e7 m that resolves 1e-8 m, far
 * below the smallest legal pixel (2 x 1 m / 5000 = 0.4 mm), while staying under a double's ~15.9
 * digits so no binary noise is printed. 12 digits would resolve only 1e-5 m there: 2.5% of that
 * smallest pixel.
 */
const WORLD_FILE_DIGITS = 15;

/** A world-file number: fixed notation (never exponents, which some readers reject), no trailing zeros. */
export function formatWorldFileNumber(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`world file value must be finite, got ${value}`);
  if (value === 0) return '0';
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  const decimals = Math.max(0, Math.min(100, WORLD_FILE_DIGITS - 1 - magnitude));
  let text = value.toFixed(decimals);
  if (text.includes('.')) text = text.replace(/0+$/, '').replace(/\.$/, '');
  return text === '-0' ? '0' : text;
}

/**
 * The ESRI world file of the grid: pixel width, row rotation, column rotation, negative pixel
 * height, then x and y of the CENTRE of the upper-left pixel (the GeoTIFF's corner origin moved
 * half a pixel right and down), one number per line.
 */
export function worldFileText(grid: AoiGrid): string {
  const [originX, pixelWidth, rowRotation, originY, columnRotation, negativeHeight] = grid.geoTransform;
  const centreX = originX + pixelWidth / 2 + rowRotation / 2;
  const centreY = originY + columnRotation / 2 + negativeHeight / 2;
  const lines = [pixelWidth, columnRotation, rowRotation, negativeHeight, centreX, centreY];
  return `${lines.map(formatWorldFileNumber).join('\n')}\n`;
}
