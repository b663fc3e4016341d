/**
 * Footprint geometry in WGS84 lon/lat: a MultiPolygon as GeoJSON coordinates
 * (polygons -> rings -> [lon, lat]; the first ring of each polygon is its outer ring, the rest holes).
 * Footprints are small (a survey, not a continent), so planar tests in lon/lat are exact enough.
 */
import type { Bounds } from './web-mercator.js';

export type Position = [number, number];
export type Ring = Position[];
export type MultiPolygon = Ring[][];

export function multiPolygonBounds(mp: MultiPolygon): Bounds {
  let minX = Number.POSITIVE_INFINITY;
  let minY = Number.POSITIVE_INFINITY;
  let maxX = Number.NEGATIVE_INFINITY;
  let maxY = Number.NEGATIVE_INFINITY;
  for (const polygon of mp) {
    for (const [x, y] of polygon[0] ?? []) {
      if (x < minX) minX = x;
      if (y < minY) minY = y;
      if (x > maxX) maxX = x;
      if (y > maxY) maxY = y;
    }
  }
  return { minX, minY, maxX, maxY };
}

/** Even-odd ray casting. Points exactly on an edge may fall either way; callers test areas, not points. */
export function pointInRing(x: number, y: number, ring: Ring): boolean {
  let inside = false;
  // Indexing, not destructuring: `const [x, y] = p` walks an iterator, garbage for every vertex.
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const pi = ring[i] as Position;
    const pj = ring[j] as Position;
    const xi = pi[0];
    const yi = pi[1];
    const xj = pj[0];
    const yj = pj[1];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

export function pointInPolygon(x: number, y: number, polygon: Ring[]): boolean {
  const outer = polygon[0];
  if (!outer || !pointInRing(x, y, outer)) return false;
  for (let hole = 1; hole < polygon.length; hole++) if (pointInRing(x, y, polygon[hole] as Ring)) return false;
  return true;
}

export function pointInMultiPolygon(x: number, y: number, mp: MultiPolygon): boolean {
  return mp.some((polygon) => pointInPolygon(x, y, polygon));
}

/**
 * Whether the segment (ax, ay)-(bx, by) passes through the open interior of the box (Liang-Barsky
 * clipping against the four sides in turn). Plain numbers, no closure: the catalogue runs it over
 * packed footprints for every candidate of a search (packed-footprint.ts).
 */
export function segmentCrossesBox(ax: number, ay: number, bx: number, by: number, box: Bounds): boolean {
  const dx = bx - ax;
  const dy = by - ay;
  let t0 = 0;
  let t1 = 1;
  for (let side = 0; side < 4; side++) {
    const p = side === 0 ? -dx : side === 1 ? dx : side === 2 ? -dy : dy;
    const q = side === 0 ? ax - box.minX : side === 1 ? box.maxX - ax : side === 2 ? ay - box.minY : box.maxY - ay;
    if (p === 0) {
      if (!(q > 0)) return false;
      continue;
    }
    const r = q / p;
    if (p < 0) {
      if (r >= t1) return false;
      if (r > t0) t0 = r;
    } else {
      if (r <= t0) return false;
      if (r < t1) t1 = r;
    }
  }
  return t1 > t0;
}

/** Whether segment a-b passes through the open interior of the box. */
export function segmentCrossesBoxInterior(a: Position, b: Position, box: Bounds): boolean {
  return segmentCrossesBox(a[0], a[1], b[0], b[1], box);
}

/**
 * Whether any edge of the polygon's rings (each ring closed, whether or not it repeats its first
 * point) passes through the open interior of the box. A loop over plain numbers: the tile planner
 * asks this of a survey's footprint, thousands of edges, for every tile it has not planned before,
 * and an array per edge (as a generator of pairs made) was a quarter of what outlived the young
 * generation under cold-tile load, for the garbage collector to sweep from the old one.
 */
function boundaryCrossesBox(polygon: Ring[], box: Bounds): boolean {
  for (const ring of polygon) {
    const count = ring.length;
    if (count === 0) continue;
    for (let i = 0; i + 1 < count; i++)
      if (edgeCrossesBox(ring[i] as Position, ring[i + 1] as Position, box)) return true;
    const first = ring[0] as Position;
    const last = ring[count - 1] as Position;
    // The closing edge, when the ring does not repeat its first point.
    if ((first[0] !== last[0] || first[1] !== last[1]) && edgeCrossesBox(last, first, box)) return true;
  }
  return false;
}

function edgeCrossesBox(a: Position, b: Position, box: Bounds): boolean {
  const ax = a[0];
  const ay = a[1];
  const bx = b[0];
  const by = b[1];
  // An edge wholly on one side of the box cannot reach its open interior: most of a footprint's edges.
  if ((ax <= box.minX && bx <= box.minX) || (ax >= box.maxX && bx >= box.maxX)) return false;
  if ((ay <= box.minY && by <= box.minY) || (ay >= box.maxY && by >= box.maxY)) return false;
  return segmentCrossesBox(ax, ay, bx, by, box);
}

function boxCentreInPolygon(box: Bounds, polygon: Ring[]): boolean {
  return pointInPolygon((box.minX + box.maxX) / 2, (box.minY + box.maxY) / 2, polygon);
}

/** True when the box and the footprint share some area. */
export function boxIntersectsMultiPolygon(box: Bounds, mp: MultiPolygon): boolean {
  for (const polygon of mp) {
    if (boundaryCrossesBox(polygon, box)) return true;
    // No boundary crosses the box: it is wholly inside the polygon, wholly in a hole, or apart.
    if (boxCentreInPolygon(box, polygon)) return true;
  }
  return false;
}

/** True when the whole box lies inside the footprint (decisions.md `overlap=full`). */
export function boxInsideMultiPolygon(box: Bounds, mp: MultiPolygon): boolean {
  for (const polygon of mp) {
    if (boundaryCrossesBox(polygon, box)) continue;
    // The box interior meets no boundary, so it is all in or all out: its centre decides. (Testing
    // the corners instead misjudged boxes touching the boundary, as corners on an edge go either way.)
    if (boxCentreInPolygon(box, polygon)) return true;
  }
  return false;
}
