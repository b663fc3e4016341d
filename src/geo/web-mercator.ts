/** EPSG:3857 / GoogleMapsCompatible grid math. Pure functions, no I/O. */

export const EARTH_RADIUS = 6378137;
export const ORIGIN_SHIFT = Math.PI * EARTH_RADIUS; // 20037508.342789244
export const TILE_SIZE = 256;
export const MAX_ZOOM = 24;
/** Latitude where the square Web Mercator world ends. */
export const MAX_LATITUDE = 85.0511287798066;

export interface Bounds {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

export interface TileCoord {
  z: number;
  x: number;
  y: number;
}

export function lonLatToMercator(lon: number, lat: number): [number, number] {
  const clamped = Math.max(-MAX_LATITUDE, Math.min(MAX_LATITUDE, lat));
  const x = (lon * ORIGIN_SHIFT) / 180;
  const y = EARTH_RADIUS * Math.log(Math.tan(Math.PI / 4 + (clamped * Math.PI) / 360));
  return [x, y];
}

export function mercatorToLonLat(x: number, y: number): [number, number] {
  const lon = (x / ORIGIN_SHIFT) * 180;
  const lat = (2 * Math.atan(Math.exp(y / EARTH_RADIUS)) - Math.PI / 2) * (180 / Math.PI);
  return [lon, lat];
}

/** Metres (EPSG:3857 units) per pixel at zoom z. */
export function resolutionAtZoom(z: number): number {
  return (2 * ORIGIN_SHIFT) / (TILE_SIZE * 2 ** z);
}

/** The zoom whose resolution is nearest (in log scale) to `resolution`, clamped to 0..MAX_ZOOM. */
export function nearestZoomForResolution(resolution: number): number {
  const z = Math.log2((2 * ORIGIN_SHIFT) / (TILE_SIZE * resolution));
  return Math.max(0, Math.min(MAX_ZOOM, Math.round(z)));
}

/** Whether two boxes share some area (touching edges do not count). */
export function boundsOverlap(a: Bounds, b: Bounds): boolean {
  return a.maxX > b.minX && a.minX < b.maxX && a.maxY > b.minY && a.minY < b.maxY;
}

export function tileBounds({ z, x, y }: TileCoord): Bounds {
  const size = (2 * ORIGIN_SHIFT) / 2 ** z;
  const minX = -ORIGIN_SHIFT + x * size;
  const maxY = ORIGIN_SHIFT - y * size;
  return { minX, minY: maxY - size, maxX: minX + size, maxY };
}

/** The tile at zoom z containing the EPSG:3857 point (edges belong to the tile right/below). */
export function tileForMercator(x: number, y: number, z: number): TileCoord {
  const n = 2 ** z;
  const size = (2 * ORIGIN_SHIFT) / n;
  const tx = Math.min(n - 1, Math.max(0, Math.floor((x + ORIGIN_SHIFT) / size)));
  const ty = Math.min(n - 1, Math.max(0, Math.floor((ORIGIN_SHIFT - y) / size)));
  return { z, x: tx, y: ty };
}

export function isValidTile({ z, x, y }: TileCoord): boolean {
  if (!Number.isInteger(z) || !Number.isInteger(x) || !Number.isInteger(y)) return false;
  if (z < 0 || z > MAX_ZOOM) return false;
  const n = 2 ** z;
  return x >= 0 && x < n && y >= 0 && y < n;
}

/** Ground metres per EPSG:3857 metre at a latitude (the Mercator scale factor is 1/cos(lat)). */
export function groundScale(lat: number): number {
  return Math.cos((lat * Math.PI) / 180);
}
