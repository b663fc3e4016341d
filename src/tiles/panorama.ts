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

/**
 * Degrees CLOCKWISE (as sharp's `rotate()` and CSS `rotate()` take them) to turn a north-up tile so
 * the viewing direction is up: East 270 (a quarter turn anticlockwise brings the east edge to the
 * top), West 90 (a quarter turn clockwise brings the west edge to the top), South 180.
 */
export function rotationFor(type: TileType): Rotation {
  switch (type) {
    case 'Vert':
    case 'North':
      return 0;
    case 'East':
      return 270;
    case 'South':
      return 180;
    case 'West':
      return 90;
  }
}

/** The server tile (ordinary grid) a client asks for when its rotated grid shows tile (x', y'). */
export function serverTileForRotatedClient(type: TileType, z: number, x: number, y: number): TileCoord {
  const last = 2 ** z - 1;
  switch (type) {
    case 'Vert':
    case 'North':
      return { z, x, y };
    case 'East':
      return { z, x: last - y, y: x };
    case 'West':
      return { z, x: y, y: last - x };
    case 'South':
      return { z, x: last - x, y: last - y };
  }
}

/** The inverse: where server tile (x, y) sits in the client's rotated grid. */
export function rotatedClientTileForServer(type: TileType, z: number, x: number, y: number): TileCoord {
  const last = 2 ** z - 1;
  switch (type) {
    case 'Vert':
    case 'North':
      return { z, x, y };
    case 'East':
      return { z, x: y, y: last - x };
    case 'West':
      return { z, x: last - y, y: x };
    case 'South':
      return { z, x: last - x, y: last - y };
  }
}
