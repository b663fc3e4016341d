/**
 * Panorama tiles (decisions.md "Tiles"): North/South/East/West tiles cover the same ground as the
 * Vert tile with the same z/x/y, rotated so that the viewing direction is up. A client showing a
 * panorama layer lays out its own rotated grid of tiles (x', y') and asks the server for tile
 * (x, y) of the ordinary grid:
 *
 *   East:  (x, y) = (2^z - 1 - y', x')
 *   West:  (x, y) = (y', 2^z - 1 - x')
 *   South: (x, y) = (2^z - 1 - x', 2^z - 1 - y')
 *   North, Vert: (x, y) = (x', y')
 *
 * The rotation of each tile's image matches that grid: the client's world is the Vert world rotated
 * by the same angle, so rotating every tile in place and re-indexing the grid is the same picture.
 */
import type { TileType } from '../catalogue/survey.js';
import type { TileCoord } from '../geo/web-mercator.js';

export type Rotation = 0 | 90 | 180 | 270;
export type QuarterTurns = 0 | 1 | 2 | 3;

/**
 * Quarter turns CLOCKWISE (as sharp's `rotate()` and CSS `rotate()` take them) that bring each
 * layer's viewing direction up: East 3 (a quarter turn anticlockwise brings the east edge to the
 * top), West 1 (a quarter turn clockwise brings the west edge to the top), South 2. The one table
 * of the turns: the rotation below, the grid formulas above and the OpenAPI document's
 * `x-nadir-quarter-turns` (api/tiles/tile-schema.ts, which the client is generated from) read it.
 */
export const QUARTER_TURNS: Readonly<Record<TileType, QuarterTurns>> = {
  Vert: 0,
  TrueOrtho: 0,
  North: 0,
  South: 2,
  East: 3,
  West: 1,
};

/** Degrees clockwise to turn a north-up tile so the viewing direction is up. */
export function rotationFor(type: TileType): Rotation {
  return (QUARTER_TURNS[type] * 90) as Rotation;
}

/**
 * Tile (x, y) of zoom z after the whole grid turned `turns` quarter turns clockwise: each turn
 * takes the left column to the top row, (x, y) to (2^z - 1 - y, x).
 */
function turnGrid(turns: number, z: number, x: number, y: number): TileCoord {
  const last = 2 ** z - 1;
  let tile: TileCoord = { z, x, y };
  for (let turn = 0; turn < turns; turn++) tile = { z, x: last - tile.y, y: tile.x };
  return tile;
}

/** The server tile (ordinary grid) a client asks for when its rotated grid shows tile (x', y'). */
export function serverTileForRotatedClient(type: TileType, z: number, x: number, y: number): TileCoord {
  return turnGrid((4 - QUARTER_TURNS[type]) % 4, z, x, y);
}

/** The inverse: where server tile (x, y) sits in the client's rotated grid (the world turned as its tiles). */
export function rotatedClientTileForServer(type: TileType, z: number, x: number, y: number): TileCoord {
  return turnGrid(QUARTER_TURNS[type], z, x, y);
}
