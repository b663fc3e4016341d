/**
 * Areas of interest as the raster API takes them (docs/api.md): a centre point and a radius of
 * 1..100 ground metres, the AOI being the axis-aligned square of side 2 x radius. Validated here
 * so a wrong call fails before it is sent, with the parameter named.
 */
import { NadirUsageError } from './errors.js';

export interface LonLat {
  lon: number;
  lat: number;
}

export interface Aoi {
  point: LonLat;
  /** Ground metres, 1..100. */
  radius: number;
}

export const MAX_RADIUS = 100;
export const MIN_RADIUS = 1;
/** The Web Mercator latitude limit; the API refuses points beyond it. */
export const MAX_LATITUDE = 85.0511;
/** The largest image the imagery endpoint renders, per side. */
export const MAX_IMAGE_SIZE = 5000;
const EARTH_RADIUS = 6378137;

export function checkPoint(point: LonLat, name = 'point'): LonLat {
  const { lon, lat } = point ?? {};
  if (!(typeof lon === 'number' && Number.isFinite(lon) && lon >= -180 && lon <= 180)) {
    throw new NadirUsageError(`${name}: longitude must be a number from -180 to 180, got ${lon}`);
  }
  if (!(typeof lat === 'number' && Number.isFinite(lat) && Math.abs(lat) <= MAX_LATITUDE)) {
    throw new NadirUsageError(
      `${name}: latitude must be a number from -${MAX_LATITUDE} to ${MAX_LATITUDE}, got ${lat}`,
    );
  }
  return { lon, lat };
}

export function checkAoi(aoi: Aoi): Aoi {
  const point = checkPoint(aoi?.point);
  const radius = aoi.radius;
  if (!(typeof radius === 'number' && Number.isFinite(radius) && radius >= MIN_RADIUS && radius <= MAX_RADIUS)) {
    throw new NadirUsageError(`radius must be a number of metres from ${MIN_RADIUS} to ${MAX_RADIUS}, got ${radius}`);
  }
  return { point, radius };
}

/** `lon,lat` as the API's `point` parameter: shortest round-tripping decimals. */
export function pointParameter(point: LonLat): string {
  return `${point.lon},${point.lat}`;
}

/** Parses `LON,LAT` (as the CLI's --point takes it); NadirUsageError when it is not one. */
export function parsePoint(text: string): LonLat {
  const parts = text.split(',');
  const numbers = parts.map((part) =>
    /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(part) ? Number(part) : Number.NaN,
  );
  if (numbers.length !== 2 || numbers.some((n) => !Number.isFinite(n))) {
    throw new NadirUsageError(`point must be LON,LAT in decimal degrees, got ${JSON.stringify(text)}`);
  }
  return checkPoint({ lon: numbers[0] as number, lat: numbers[1] as number });
}

export interface BBox {
  west: number;
  south: number;
  east: number;
  north: number;
}

export function checkBBox(bbox: BBox): BBox {
  const { west, south, east, north } = bbox;
  checkPoint({ lon: west, lat: south }, 'bbox south-west corner');
  checkPoint({ lon: east, lat: north }, 'bbox north-east corner');
  if (!(west < east && south < north)) {
    throw new NadirUsageError(`bbox must be W,S,E,N with W < E and S < N, got ${west},${south},${east},${north}`);
  }
  return { west, south, east, north };
}

export function parseBBox(text: string): BBox {
  const numbers = text.split(',').map((part) => (part.trim() === '' ? Number.NaN : Number(part)));
  if (numbers.length !== 4 || numbers.some((n) => !Number.isFinite(n))) {
    throw new NadirUsageError(`bbox must be W,S,E,N in decimal degrees, got ${JSON.stringify(text)}`);
  }
  const [west, south, east, north] = numbers as [number, number, number, number];
  return checkBBox({ west, south, east, north });
}

const mercatorY = (lat: number) => EARTH_RADIUS * Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
const latitudeOf = (y: number) => (360 / Math.PI) * Math.atan(Math.exp(y / EARTH_RADIUS)) - 90;

/**
 * The smallest AOI (centre and radius) whose square holds the box, as the server draws AOIs: a
 * square of 2 x radius ground metres, which is 2 x radius / cos(lat) Web Mercator metres at the
 * centre's latitude. The radius is rounded up to whole centimetres; it may exceed 100 (the caller
 * then splits the box, see aoiGrid).
 */
export function aoiAround(bbox: BBox): Aoi {
  checkBBox(bbox);
  const x0 = (bbox.west * Math.PI * EARTH_RADIUS) / 180;
  const x1 = (bbox.east * Math.PI * EARTH_RADIUS) / 180;
  const y0 = mercatorY(bbox.south);
  const y1 = mercatorY(bbox.north);
  const centre = { lon: (bbox.west + bbox.east) / 2, lat: latitudeOf((y0 + y1) / 2) };
  const scale = Math.cos((centre.lat * Math.PI) / 180);
  const halfSide = (Math.max(x1 - x0, y1 - y0) / 2) * scale;
  return { point: centre, radius: Math.max(MIN_RADIUS, Math.ceil(halfSide * 100) / 100) };
}

/** Size in pixels (per side) that samples an AOI at a ground sample distance, and whether the cap cut it. */
export interface ImageSize {
  size: number;
  /** The GSD the image really has, metres per pixel. */
  gsd: number;
  /** True when the native size was over MAX_IMAGE_SIZE and the image is coarser than the survey. */
  capped: boolean;
}

/**
 * The native size of a type over an AOI: 2 x radius / GSD (service-spec "Resolution rule"),
 * rounded to the nearest pixel, at least 1, at most MAX_IMAGE_SIZE (a 200 m AOI reaches the cap
 * only below 4 cm GSD).
 */
export function nativeImageSize(radius: number, gsd: number): ImageSize {
  if (!(Number.isFinite(gsd) && gsd > 0)) throw new NadirUsageError(`pixel size must be a positive number, got ${gsd}`);
  const exact = Math.max(1, Math.round((2 * radius) / gsd));
  const size = Math.min(exact, MAX_IMAGE_SIZE);
  return { size, gsd: (2 * radius) / size, capped: exact > MAX_IMAGE_SIZE };
}
