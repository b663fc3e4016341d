/**
 * Search areas of the STAC API as lists of plain geometries, any of which a footprint must meet:
 * a GeoJSON geometry, a GeometryCollection (its members, nested collections flattened), and a
 * bbox, which splits in two where it crosses the antimeridian (minLon > maxLon). Pure.
 */
import { type Geometry, geometryBounds, geometryIntersectsMultiPolygon, geometryProblem } from '../geo/geometry.js';
import type { MultiPolygon } from '../geo/polygon.js';
import type { Bounds } from '../geo/web-mercator.js';

/** Members one GeometryCollection may hold, all levels together, and how deep collections nest. */
export const MAX_COLLECTION_MEMBERS = 1000;
const MAX_NESTING = 4;

/** A search area: the footprint must meet one of these. Never empty. */
export type SearchArea = Geometry[];

/**
 * The geometries of a GeoJSON geometry value (a GeometryCollection's members), or a sentence
 * saying what is wrong with it, worded to follow the parameter's name (`intersects ...`).
 */
export function searchAreaOf(value: unknown): SearchArea | string {
  const found: Geometry[] = [];
  const visit = (item: unknown, depth: number): string | undefined => {
    if (typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'GeometryCollection') {
      if (depth >= MAX_NESTING) return `nests GeometryCollections more than ${MAX_NESTING} deep`;
      const members = (item as { geometries?: unknown }).geometries;
      if (!Array.isArray(members)) return 'is a GeometryCollection without a geometries list';
      for (const member of members) {
        const problem = visit(member, depth + 1);
        if (problem) return problem;
        if (found.length > MAX_COLLECTION_MEMBERS) {
          return `is a GeometryCollection of more than ${MAX_COLLECTION_MEMBERS} geometries`;
        }
      }
      return undefined;
    }
    const problem = geometryProblem(item);
    if (problem) {
      return problem.startsWith('type must be one of')
        ? `${problem}, GeometryCollection`
        : depth > 0
          ? `has a member that ${problem}`
          : problem;
    }
    found.push(item as Geometry);
    return undefined;
  };
  const problem = visit(value, 0);
  if (problem) return problem;
  if (found.length === 0) return 'is a GeometryCollection of no geometries';
  return found;
}

/** The lon/lat box around an area. */
export function searchAreaBounds(area: SearchArea): Bounds {
  const boxes = area.map(geometryBounds);
  return {
    minX: Math.min(...boxes.map((box) => box.minX)),
    minY: Math.min(...boxes.map((box) => box.minY)),
    maxX: Math.max(...boxes.map((box) => box.maxX)),
    maxY: Math.max(...boxes.map((box) => box.maxY)),
  };
}

export function searchAreaMeets(area: SearchArea, footprint: MultiPolygon): boolean {
  return area.some((geometry) => geometryIntersectsMultiPolygon(geometry, footprint));
}

export function boxGeometry({ minX, minY, maxX, maxY }: Bounds): Geometry {
  return {
    type: 'Polygon',
    coordinates: [
      [
        [minX, minY],
        [maxX, minY],
        [maxX, maxY],
        [minX, maxY],
        [minX, minY],
      ],
    ],
  };
}

/**
 * A STAC bbox (minLon may be above maxLon: the box crosses the antimeridian) as the boxes it
 * covers: one, or its western and eastern halves.
 */
export function bboxBoxes(box: Bounds): Bounds[] {
  if (box.minX <= box.maxX) return [box];
  return [
    { minX: box.minX, minY: box.minY, maxX: 180, maxY: box.maxY },
    { minX: -180, minY: box.minY, maxX: box.maxX, maxY: box.maxY },
  ];
}
