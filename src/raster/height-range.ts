import { DSM_NODATA } from '../geo/asset-layout.js';
import type { HeightRange } from './colour-ramp.js';

/** Min and max of the heights that are not nodata (DSM_NODATA or not finite). */
export function validRange(heights: Float32Array): HeightRange | undefined {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const height of heights) {
    if (height === DSM_NODATA || !Number.isFinite(height)) continue;
    if (height < min) min = height;
    if (height > max) max = height;
  }
  return min <= max ? { min, max } : undefined;
}
