/**
 * Footprints as the catalogue stores them: one flat run of float64 (little-endian) numbers,
 *   polygonCount, then per polygon: ringCount, then per ring: pointCount, x0, y0, x1, y1, ...
 * A search tests every candidate's footprint; parsing it from GeoJSON text cost more than the
 * R*Tree lookup and the SQL row together, while this needs no parsing at all. Float64 keeps
 * every coordinate exactly as given (JSON text did too), so answers do not change.
 *
 * The box tests are geo/polygon.ts's (`boxIntersectsMultiPolygon`, `boxInsideMultiPolygon`) over
 * the flat numbers: the same arithmetic in the same order, so the same edge rules; the tests
 * check the two against each other on random shapes.
 */
import { type MultiPolygon, type Position, type Ring, segmentCrossesBox } from '../geo/polygon.js';
import type { Bounds } from '../geo/web-mercator.js';

export function packFootprint(mp: MultiPolygon): Buffer {
  const numbers: number[] = [mp.length];
  for (const polygon of mp) {
    numbers.push(polygon.length);
    for (const ring of polygon) {
      numbers.push(ring.length);
      for (const [x, y] of ring) {
        if (!Number.isFinite(x) || !Number.isFinite(y)) throw new Error('footprint coordinates must be finite numbers');
        // + 0 turns -0 into 0, as the JSON text this replaces did.
        numbers.push(x + 0, y + 0);
      }
    }
  }
  const packed = new Float64Array(numbers);
  return Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
}

/** The numbers of a stored footprint (a view when the bytes are aligned, else a copy). */
export function footprintNumbers(bytes: Uint8Array): Float64Array {
  if (bytes.byteOffset % 8 === 0) return new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8);
  return new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

export function unpackFootprint(bytes: Uint8Array): MultiPolygon {
  const f = footprintNumbers(bytes);
  let o = 0;
  const mp: MultiPolygon = [];
  for (let polygons = f[o++] as number; polygons > 0; polygons--) {
    const polygon: Ring[] = [];
    for (let rings = f[o++] as number; rings > 0; rings--) {
      const ring: Ring = [];
      for (let points = f[o++] as number; points > 0; points--, o += 2) ring.push([f[o], f[o + 1]] as Position);
      polygon.push(ring);
    }
    mp.push(polygon);
  }
  return mp;
}

/** The footprint's box as [minX, minY, maxX, maxY] (every ring's points; holes lie inside anyway). */
export function packedBounds(f: Float64Array): [number, number, number, number] {
  const box: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  let o = 0;
  for (let polygons = f[o++] as number; polygons > 0; polygons--) {
    for (let rings = f[o++] as number; rings > 0; rings--) {
      for (let points = f[o++] as number; points > 0; points--, o += 2) {
        const x = f[o] as number;
        const y = f[o + 1] as number;
        if (x < box[0]) box[0] = x;
        if (y < box[1]) box[1] = y;
        if (x > box[2]) box[2] = x;
        if (y > box[3]) box[3] = y;
      }
    }
  }
  return box;
}

/** geo/polygon.ts `pointInRing` (even-odd) over the ring's `n` points starting at `start`. */
function pointInRing(x: number, y: number, f: Float64Array, start: number, n: number): boolean {
  let inside = false;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const xi = f[start + 2 * i] as number;
    const yi = f[start + 2 * i + 1] as number;
    const xj = f[start + 2 * j] as number;
    const yj = f[start + 2 * j + 1] as number;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Whether any edge of the ring (closing edge included when the ring is not closed) crosses the box. */
function ringCrossesBox(f: Float64Array, start: number, n: number, box: Bounds): boolean {
  for (let i = 0; i + 1 < n; i++) {
    const k = start + 2 * i;
    if (segmentCrossesBox(f[k] as number, f[k + 1] as number, f[k + 2] as number, f[k + 3] as number, box)) {
      return true;
    }
  }
  if (n === 0) return false;
  const last = start + 2 * (n - 1);
  const fx = f[start] as number;
  const fy = f[start + 1] as number;
  const lx = f[last] as number;
  const ly = f[last + 1] as number;
  return (fx !== lx || fy !== ly) && segmentCrossesBox(lx, ly, fx, fy, box);
}

/**
 * Per polygon: does a boundary cross the box's interior, and is the box's centre inside it (in
 * the outer ring, in no hole)? `full` needs a polygon with no crossing and the centre inside;
 * intersecting needs a crossing or the centre inside.
 */
function packedBoxTest(box: Bounds, f: Float64Array, full: boolean): boolean {
  const cx = (box.minX + box.maxX) / 2;
  const cy = (box.minY + box.maxY) / 2;
  let o = 0;
  for (let polygons = f[o++] as number; polygons > 0; polygons--) {
    let crossed = false;
    let centreInside = false;
    const rings = f[o++] as number;
    for (let r = 0; r < rings; r++) {
      const n = f[o++] as number;
      if (!crossed && ringCrossesBox(f, o, n, box)) crossed = true;
      const inRing = pointInRing(cx, cy, f, o, n);
      if (r === 0) centreInside = inRing;
      else if (inRing) centreInside = false;
      o += 2 * n;
    }
    if (full ? !crossed && centreInside : crossed || centreInside) return true;
  }
  return false;
}

/** `boxIntersectsMultiPolygon` for a packed footprint. */
export function packedBoxIntersects(box: Bounds, footprint: Float64Array): boolean {
  return packedBoxTest(box, footprint, false);
}

/** `boxInsideMultiPolygon` for a packed footprint. */
export function packedBoxInside(box: Bounds, footprint: Float64Array): boolean {
  return packedBoxTest(box, footprint, true);
}
