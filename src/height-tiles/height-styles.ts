/**
 * DetailDsm drawn as map tiles, pure pixel arithmetic (no I/O): heights in, 256 x 256 RGBA out.
 * The heights come on the tile's grid grown by one pixel on every side (258 x 258), so the shade
 * of an edge pixel sees its neighbours in the next tile and tiles join without a seam.
 *
 * - `relief`: the DSM pictures' viridis ramp (raster/colour-ramp.ts) spread over one height range
 *   for the whole layer, interpolated as gdaldem color-relief does; no height, transparent.
 * - `hillshade`: gdaldem's default hillshade (Horn's slope, light from azimuth 315 at altitude 45,
 *   1..255 grey), with true relief on the Mercator grid (a Mercator metre is cos(lat) ground
 *   metres); no height, transparent.
 * - `terrain-rgb`: Mapbox's Terrain-RGB (height = -10000 + (R x 65536 + G x 256 + B) x 0.1 m), which
 *   MapLibre's `raster-dem` source reads (`encoding: mapbox`). Opaque everywhere: browsers decode
 *   images premultiplied, so a transparent pixel would read as -10000 m; where there is no height
 *   the survey's lowest height is written, so the survey stands on its ground, not on a cliff.
 */
import { DSM_NODATA } from '../geo/asset-layout.js';
import { TILE_SIZE } from '../geo/web-mercator.js';
import { type HeightRange, rampColour } from '../raster/index.js';

export const HEIGHT_STYLES = ['relief', 'hillshade', 'terrain-rgb'] as const;
export type HeightStyle = (typeof HEIGHT_STYLES)[number];

/** Pixels of neighbouring tiles read around a tile. */
export const BORDER = 1;
/** Pixels per side of the heights a tile is drawn from. */
export const GROWN_SIZE = TILE_SIZE + 2 * BORDER;

/** Changes whenever what a style draws changes (it is in the tiles' ETags). */
export const STYLES_VERSION = 'height-styles-1';

export function hasHeight(height: number): boolean {
  return height !== DSM_NODATA && Number.isFinite(height);
}

/** The colour of every height, by the layer's range. */
export function reliefTile(heights: Float32Array, range: HeightRange): Uint8Array {
  const rgba = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
  const span = range.max - range.min;
  for (let row = 0; row < TILE_SIZE; row++) {
    for (let column = 0; column < TILE_SIZE; column++) {
      const height = heights[(row + BORDER) * GROWN_SIZE + column + BORDER] as number;
      if (!hasHeight(height)) continue;
      const [r, g, b] = rampColour(span > 0 ? (height - range.min) / span : 0.5);
      const at = (row * TILE_SIZE + column) * 4;
      rgba[at] = Math.round(r);
      rgba[at + 1] = Math.round(g);
      rgba[at + 2] = Math.round(b);
      rgba[at + 3] = 255;
    }
  }
  return rgba;
}

const AZIMUTH = (315 * Math.PI) / 180;
const ALTITUDE = (45 * Math.PI) / 180;

/**
 * Hillshade of the heights on a grid of `pixelMetres` (EPSG:3857) at `latitude`. A neighbour with
 * no height takes the centre's (as gdaldem's -compute_edges does), so the shade reaches the edge
 * of the data instead of leaving a dark rim.
 */
export function hillshadeTile(heights: Float32Array, pixelMetres: number, latitude: number): Uint8Array {
  const rgba = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
  const ground = pixelMetres * Math.cos((latitude * Math.PI) / 180);
  const window = new Float64Array(9);
  for (let row = 0; row < TILE_SIZE; row++) {
    for (let column = 0; column < TILE_SIZE; column++) {
      const centreAt = (row + BORDER) * GROWN_SIZE + column + BORDER;
      const centre = heights[centreAt] as number;
      if (!hasHeight(centre)) continue;
      for (let k = 0; k < 9; k++) {
        const height = heights[centreAt + (Math.floor(k / 3) - 1) * GROWN_SIZE + (k % 3) - 1] as number;
        window[k] = hasHeight(height) ? height : centre;
      }
      const grey = shade(window, ground);
      const at = (row * TILE_SIZE + column) * 4;
      rgba[at] = grey;
      rgba[at + 1] = grey;
      rgba[at + 2] = grey;
      rgba[at + 3] = 255;
    }
  }
  return rgba;
}

/**
 * gdaldem's hillshade of one 3 x 3 window (a b c / d e f / g h i), 1..255: Horn's rises per ground
 * metre eastward (p) and southward (q), lit as gdaldem_lib.cpp's GDALHillshadeAlg does.
 */
function shade(w: Float64Array, ground: number): number {
  const [a, b, c, d, , f, g, h, i] = w as unknown as number[];
  const p =
    ((c as number) + 2 * (f as number) + (i as number) - ((a as number) + 2 * (d as number) + (g as number))) /
    (8 * ground);
  const q =
    ((g as number) + 2 * (h as number) + (i as number) - ((a as number) + 2 * (b as number) + (c as number))) /
    (8 * ground);
  const lit =
    (Math.sin(ALTITUDE) + Math.cos(ALTITUDE) * (q * Math.cos(AZIMUTH) - p * Math.sin(AZIMUTH))) /
    Math.sqrt(1 + p * p + q * q);
  return lit <= 0 ? 1 : Math.round(1 + 254 * lit);
}

/** Terrain-RGB of the heights; `ground` where there is none. */
export function terrainRgbTile(heights: Float32Array, ground: number): Uint8Array {
  const rgba = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
  for (let row = 0; row < TILE_SIZE; row++) {
    for (let column = 0; column < TILE_SIZE; column++) {
      const height = heights[(row + BORDER) * GROWN_SIZE + column + BORDER] as number;
      const value = Math.min(0xffffff, Math.max(0, Math.round(((hasHeight(height) ? height : ground) + 10000) * 10)));
      const at = (row * TILE_SIZE + column) * 4;
      rgba[at] = value >> 16;
      rgba[at + 1] = (value >> 8) & 0xff;
      rgba[at + 2] = value & 0xff;
      rgba[at + 3] = 255;
    }
  }
  return rgba;
}

/** The height a Terrain-RGB pixel encodes (for tests and clients). */
export function terrainRgbHeight(r: number, g: number, b: number): number {
  return -10000 + (r * 65536 + g * 256 + b) * 0.1;
}
