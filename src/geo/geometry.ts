/**
 * GeoJSON geometries in WGS84 lon/lat as a search area (STAC's `intersects`), and whether one
 * shares any point with a survey footprint. Planar in lon/lat, like polygon.ts: areas asked about
 * are places, not continents. Pure.
 */
import { type MultiPolygon, type Position, pointInMultiPolygon, pointInPolygon, type Ring } from './polygon.js';
import type { Bounds } from './web-mercator.js';

export type Geometry =
  | { type: 'Point'; coordinates: Position }
  | { type: 'MultiPoint'; coordinates: Position[] }
  | { type: 'LineString'; coordinates: Position[] }
  | { type: 'MultiLineString'; coordinates: Position[][] }
  | { type: 'Polygon'; coordinates: Ring[] }
  | { type: 'MultiPolygon'; coordinates: MultiPolygon };

export const GEOMETRY_TYPES = ['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon'];

/** Why `value` is not a geometry this module takes, or undefined when it is one. */
export function geometryProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'must be a GeoJSON geometry object';
  const { type, coordinates } = value as { type?: unknown; coordinates?: unknown };
  if (typeof type !== 'string' || !GEOMETRY_TYPES.includes(type)) {
    return `type must be one of ${GEOMETRY_TYPES.join(', ')}`;
  }
  const depth = { Point: 0, MultiPoint: 1, LineString: 1, MultiLineString: 2, Polygon: 2, MultiPolygon: 3 }[type] ?? 0;
  const positions = positionsAt(coordinates, depth);
  if (!positions) return `coordinates must be nested arrays of [longitude, latitude] for a ${type}`;
  if (positions.length === 0) return 'coordinates must hold at least one position';
  if (positions.some(([lon, lat]) => !(Math.abs(lon) <= 180 && Math.abs(lat) <= 90))) {
    return 'coordinates must be longitudes from -180 to 180 and latitudes from -90 to 90';
  }
  if (type === 'Polygon' || type === 'MultiPolygon') {
    const rings = (type === 'Polygon' ? [coordinates] : coordinates) as Ring[][];
    if (rings.some((polygon) => polygon.length === 0 || polygon.some((ring) => ring.length < 4))) {
      return 'every polygon ring must have at least 4 positions';
    }
  }
  return undefined;
}

/** Every position of `value`, nested `depth` arrays deep, or undefined when it is not that shape. */
function positionsAt(value: unknown, depth: number): Position[] | undefined {
  if (!Array.isArray(value)) return undefined;
  if (depth === 0) {
    const ok =
      (value.length === 2 || value.length === 3) && value.every((n) => typeof n === 'number' && Number.isFinite(n));
    return ok ? [[value[0] as number, value[1] as number]] : undefined;
  }
  const found: Position[] = [];
  for (const item of value) {
    const inner = positionsAt(item, depth - 1);
    if (!inner) return undefined;
    found.push(...inner);
  }
  return found;
}

/** The geometry as polygons, lines and points: what the intersection test walks. */
function parts(geometry: Geometry): { polygons: Ring[][]; lines: Position[][]; points: Position[] } {
  switch (geometry.type) {
    // A point is also a segment of no length, so that one on a footprint's edge meets it
    // (ray casting may put a point on an edge either way).
    case 'Point':
      return { polygons: [], lines: [[geometry.coordinates, geometry.coordinates]], points: [geometry.coordinates] };
    case 'MultiPoint':
      return { polygons: [], lines: geometry.coordinates.map((p) => [p, p]), points: geometry.coordinates };
    case 'LineString':
      return { polygons: [], lines: [geometry.coordinates], points: geometry.coordinates };
    case 'MultiLineString':
      return { polygons: [], lines: geometry.coordinates, points: geometry.coordinates.flat() };
    case 'Polygon':
      return { polygons: [geometry.coordinates], lines: geometry.coordinates, points: geometry.coordinates.flat() };
    case 'MultiPolygon':
      return {
        polygons: geometry.coordinates,
        lines: geometry.coordinates.flat(),
        points: geometry.coordinates.flat(2),
      };
  }
}

export function geometryBounds(geometry: Geometry): Bounds {
  const { points } = parts(geometry);
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  return { minX: Math.min(...xs), minY: Math.min(...ys), maxX: Math.max(...xs), maxY: Math.max(...ys) };
}

function orientation(a: Position, b: Position, c: Position): number {
  const cross = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
  return cross === 0 ? 0 : cross > 0 ? 1 : -1;
}

function onSegment(a: Position, b: Position, p: Position): boolean {
  return (
    Math.min(a[0], b[0]) <= p[0] &&
    p[0] <= Math.max(a[0], b[0]) &&
    Math.min(a[1], b[1]) <= p[1] &&
    p[1] <= Math.max(a[1], b[1])
  );
}

/** Whether segments a-b and c-d share a point (touching counts: GeoJSON intersects is closed). */
export function segmentsMeet(a: Position, b: Position, c: Position, d: Position): boolean {
  const o1 = orientation(a, b, c);
  const o2 = orientation(a, b, d);
  const o3 = orientation(c, d, a);
  const o4 = orientation(c, d, b);
  if (o1 !== o2 && o3 !== o4) return true;
  return (
    (o1 === 0 && onSegment(a, b, c)) ||
    (o2 === 0 && onSegment(a, b, d)) ||
    (o3 === 0 && onSegment(c, d, a)) ||
    (o4 === 0 && onSegment(c, d, b))
  );
}

function* segments(lines: Position[][]): Generator<[Position, Position]> {
  for (const line of lines)
    for (let i = 0; i + 1 < line.length; i++) yield [line[i] as Position, line[i + 1] as Position];
}

/**
 * Whether the geometry and the footprint share a point: a position of either inside the other, or
 * two of their edges meeting. (Two areas that overlap without either holding a vertex of the
 * other must have crossing edges.)
 */
export function geometryIntersectsMultiPolygon(geometry: Geometry, footprint: MultiPolygon): boolean {
  const mine = parts(geometry);
  if (mine.points.some(([x, y]) => pointInMultiPolygon(x, y, footprint))) return true;
  const theirs = footprint.flat(2);
  if (theirs.some(([x, y]) => mine.polygons.some((polygon) => pointInPolygon(x, y, polygon)))) return true;
  const theirEdges = [...segments(footprint.flat())];
  for (const [a, b] of segments(mine.lines)) {
    for (const [c, d] of theirEdges) if (segmentsMeet(a, b, c, d)) return true;
  }
  return false;
}
