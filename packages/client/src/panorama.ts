/**
 * Panorama tiles on a map (decisions.md "Tiles", docs/tiles.md). North/South/East/West tiles cover
 * the same ground as the Vert tile with the same z/x/y, turned so that the viewing direction is
 * up, and are displayed at 256x192 because of the 45-degree foreshortening. A map showing such a
 * layer lays out its own rotated grid (x', y') and asks the server for tile (x, y):
 *
 *   East:  (x, y) = (2^z - 1 - y', x')        West:  (x, y) = (y', 2^z - 1 - x')
 *   South: (x, y) = (2^z - 1 - x', 2^z - 1 - y')   North, Vert: (x, y) = (x', y')
 *
 * Both are a turn of the grid by the quarter turns the server turns each layer's pictures by,
 * generated from its OpenAPI document (generated/facts.ts, from src/tiles/panorama.ts's table);
 * test/client checks the grid against the server's tiles.
 */
import { NadirUsageError } from './errors.js';
import { PANORAMA_QUARTER_TURNS } from './generated/facts.js';
import type { TileType } from './types.js';

export interface TileXYZ {
  z: number;
  x: number;
  y: number;
}

/** How a panorama tile is shown: full width, three quarters of the height. */
export const PANORAMA_DISPLAY_SIZE = { width: 256, height: 192 } as const;
export const TILE_SIZE = 256;
export const MAX_ZOOM = 24;

export function checkTile(tile: TileXYZ): TileXYZ {
  const { z, x, y } = tile;
  if (!(Number.isInteger(z) && z >= 0 && z <= MAX_ZOOM))
    throw new NadirUsageError(`z must be 0..${MAX_ZOOM}, got ${z}`);
  const last = 2 ** z - 1;
  if (!(Number.isInteger(x) && x >= 0 && x <= last))
    throw new NadirUsageError(`x must be 0..${last} at zoom ${z}, got ${x}`);
  if (!(Number.isInteger(y) && y >= 0 && y <= last))
    throw new NadirUsageError(`y must be 0..${last} at zoom ${z}, got ${y}`);
  return tile;
}

/** The size a tile of this layer is displayed at. */
export function displaySize(type: TileType): { width: number; height: number } {
  return type === 'Vert' ? { width: TILE_SIZE, height: TILE_SIZE } : PANORAMA_DISPLAY_SIZE;
}

/** Degrees clockwise the server turned the north-up picture so the viewing direction is up. */
export function panoramaRotation(type: TileType): 0 | 90 | 180 | 270 {
  return (PANORAMA_QUARTER_TURNS[type] * 90) as 0 | 90 | 180 | 270;
}

/**
 * Tile (x, y) once the grid is turned clockwise by `quarters` quarter turns: a quarter turn puts
 * column x at row x and row y at column 2^z - 1 - y.
 */
function turned(quarters: number, { z, x, y }: TileXYZ): TileXYZ {
  const edge = 2 ** z - 1;
  return quarters === 0 ? { z, x, y } : turned(quarters - 1, { z, x: edge - y, y: x });
}

/** The server tile to ask for when the map's rotated grid shows (x', y'): the grid turned back. */
export function serverTileFor(type: TileType, tile: TileXYZ): TileXYZ {
  return turned((4 - PANORAMA_QUARTER_TURNS[type]) % 4, checkTile(tile));
}

/** Where server tile (x, y) sits in the map's rotated grid (serverTileFor's inverse): turned as its tiles. */
export function rotatedGridTileFor(type: TileType, tile: TileXYZ): TileXYZ {
  return turned(PANORAMA_QUARTER_TURNS[type], checkTile(tile));
}

/**
 * The map's rotated grid laid out for a panorama layer: rows of server tiles, top row first,
 * each `displaySize` pixels, covering server tiles [minX..maxX] x [minY..maxY] of zoom z.
 */
export function panoramaGrid(
  type: TileType,
  z: number,
  range: { minX: number; minY: number; maxX: number; maxY: number },
): TileXYZ[][] {
  const a = rotatedGridTileFor(type, { z, x: range.minX, y: range.minY });
  const b = rotatedGridTileFor(type, { z, x: range.maxX, y: range.maxY });
  const rows: TileXYZ[][] = [];
  for (let gy = Math.min(a.y, b.y); gy <= Math.max(a.y, b.y); gy++) {
    const row: TileXYZ[] = [];
    for (let gx = Math.min(a.x, b.x); gx <= Math.max(a.x, b.x); gx++)
      row.push(serverTileFor(type, { z, x: gx, y: gy }));
    rows.push(row);
  }
  return rows;
}
