/**
 * Areas wider than one AOI (200 m) as a grid of AOIs. The server's image of an AOI is the square
 * of side 2 x radius / cos(lat) Web Mercator metres around the point (docs/imagery.md "The output
 * grid"), so cells are laid out in Mercator: every cell the same Mercator side, each with the
 * radius that gives that side at its own latitude. Neighbouring images then meet exactly and a
 * VRT can place each at its offset. Each cell is its own coverage call, token and transaction.
 */
import { type Aoi, type BBox, checkBBox, MAX_RADIUS } from './area.js';

const EARTH_RADIUS = 6378137;
const mercatorX = (lon: number) => (lon * Math.PI * EARTH_RADIUS) / 180;
const mercatorY = (lat: number) => EARTH_RADIUS * Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
const longitudeOf = (x: number) => (x / EARTH_RADIUS) * (180 / Math.PI);
const latitudeOf = (y: number) => (360 / Math.PI) * Math.atan(Math.exp(y / EARTH_RADIUS)) - 90;

export interface MercatorBox {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

export interface AreaCell {
  row: number;
  column: number;
  aoi: Aoi;
  /** The cell's square in EPSG:3857 metres (the server's image of `aoi`). */
  mercator: MercatorBox;
}

export interface AreaGrid {
  rows: number;
  columns: number;
  /** Mercator side of every cell. */
  side: number;
  /** The union of the cells (it holds the box, and a little more on the east and south). */
  mercator: MercatorBox;
  cells: AreaCell[];
}

/**
 * The grid of AOIs covering a lon/lat box, row 0 the northernmost, column 0 the westernmost.
 * The cell side is the largest that keeps every cell's radius within `maxRadius` ground metres:
 * the radius of a given Mercator side is largest where cos(lat) is, the latitude nearest the
 * equator.
 */
export function areaGrid(bbox: BBox, maxRadius = MAX_RADIUS): AreaGrid {
  checkBBox(bbox);
  if (!(maxRadius >= 1 && maxRadius <= MAX_RADIUS))
    throw new RangeError(`maxRadius must be 1..${MAX_RADIUS}, got ${maxRadius}`);
  const x0 = mercatorX(bbox.west);
  const x1 = mercatorX(bbox.east);
  const y0 = mercatorY(bbox.south);
  const y1 = mercatorY(bbox.north);
  // The grid reaches past the box's south edge (whole cells), where a cell is nearer the equator:
  // the side is fitted to the grid's own south edge, which moves as the side shrinks; twice or
  // three times is enough for it to settle.
  const sideFor = (south: number, north: number) => {
    const nearestEquator = south <= 0 && north >= 0 ? 0 : Math.min(Math.abs(south), Math.abs(north));
    // A hair under the limit, so rounding in the server's own arithmetic never makes it 100.000001.
    return (2 * maxRadius * (1 - 1e-9)) / Math.cos((nearestEquator * Math.PI) / 180);
  };
  let side = sideFor(bbox.south, bbox.north);
  let columns = 1;
  let rows = 1;
  for (let round = 0; round < 10; round++) {
    columns = Math.max(1, Math.ceil((x1 - x0) / side - 1e-9));
    rows = Math.max(1, Math.ceil((y1 - y0) / side - 1e-9));
    const fitted = sideFor(latitudeOf(y1 - rows * side), bbox.north);
    if (fitted >= side) break;
    side = fitted;
  }
  const cells: AreaCell[] = [];
  for (let row = 0; row < rows; row++) {
    for (let column = 0; column < columns; column++) {
      const mercator = {
        minX: x0 + column * side,
        maxX: x0 + (column + 1) * side,
        maxY: y1 - row * side,
        minY: y1 - (row + 1) * side,
      };
      const lat = latitudeOf((mercator.minY + mercator.maxY) / 2);
      const point = { lon: longitudeOf((mercator.minX + mercator.maxX) / 2), lat };
      cells.push({ row, column, mercator, aoi: { point, radius: (side / 2) * Math.cos((lat * Math.PI) / 180) } });
    }
  }
  return {
    rows,
    columns,
    side,
    cells,
    mercator: { minX: x0, maxX: x0 + columns * side, maxY: y1, minY: y1 - rows * side },
  };
}
