import assert from 'node:assert/strict';

/** Asserts |actual - expected| <= tolerance (absolute). */
export function approx(actual: number, expected: number, tolerance: number, message?: string): void {
  const ok = Math.abs(actual - expected) <= tolerance;
  assert.ok(ok, `${message ? `${message}: ` : ''}expected ${expected} ± ${tolerance}, got ${actual}`);
}

/** Asserts |actual - expected| <= fraction * |expected|. */
export function approxRel(actual: number, expected: number, fraction: number, message?: string): void {
  approx(actual, expected, Math.abs(expected) * fraction, message);
}

/** A small seeded PRNG so randomised tests are reproducible (the demo town's). */
export { mulberry32 } from '@nadir/demo-town/random';

/** Great-circle distance on a sphere of the IUGG mean radius, written independently of src/geo/ground.ts. */
export function referenceHaversine(lon1: number, lat1: number, lon2: number, lat2: number): number {
  const r = Math.PI / 180;
  const h =
    (1 - Math.cos((lat2 - lat1) * r)) / 2 +
    (Math.cos(lat1 * r) * Math.cos(lat2 * r) * (1 - Math.cos((lon2 - lon1) * r))) / 2;
  return 2 * 6371008.8 * Math.asin(Math.sqrt(h));
}
