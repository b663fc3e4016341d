/**
 * What renderers produce into: pixel grids, strip sinks and strip buffers. Free of GDAL, so
 * render workers can load it (gdal-async does not support worker threads).
 */

export const DSM_NODATA = -9999;

/** A north-up pixel grid in local metres (see geo.ts). */
export interface PixelGrid {
  minX: number;
  maxY: number;
  gsd: number;
  width: number;
  height: number;
}

export type RasterKind = 'rgba' | 'dsm';

/** Where renderers put their output, one block (x, y, width, height, one array per band) at a time. */
export interface StripSink {
  /** May keep `data` until the next call resolves; callers alternate buffers (StripBuffers). */
  write(x: number, y: number, width: number, height: number, data: (Uint8Array | Float32Array)[]): Promise<void>;
}

/**
 * Two alternating sets of band arrays for strip output. GeoTiffWriter.write resolves once the
 * block before the one just queued is written, so the set used two strips ago is free again.
 */
export class StripBuffers<T extends Uint8Array | Float32Array> {
  private readonly sets: T[][];
  private turn = 0;

  constructor(
    make: () => T,
    bandCount: number,
    private readonly fillValue = 0,
  ) {
    this.sets = [0, 1].map(() => Array.from({ length: bandCount }, make));
  }

  /** The next free set, cleared to the fill value (0, or nodata for the DSM). */
  next(): T[] {
    const set = this.sets[this.turn++ % 2]!;
    for (const band of set) band.fill(this.fillValue);
    return set;
  }
}

export function pixelGridFor(
  bounds: { minX: number; minY: number; maxX: number; maxY: number },
  gsd: number,
): PixelGrid {
  return {
    minX: bounds.minX,
    maxY: bounds.maxY,
    gsd,
    width: Math.round((bounds.maxX - bounds.minX) / gsd),
    height: Math.round((bounds.maxY - bounds.minY) / gsd),
  };
}

/** Rows per strip written by the row-by-row renderers. */
export const STRIP_ROWS = 256;

/**
 * Render an output raster strip by strip and hand each strip to the sink. `fill` should pass
 * straight on to a plain top-level function: V8 optimises long pixel loops poorly inside
 * async functions and when they read variables captured by closures.
 */
export async function writeRowStrips<T extends Uint8Array | Float32Array>(
  sink: StripSink,
  out: PixelGrid,
  buffers: StripBuffers<T>,
  fill: (top: number, rows: number, bands: T[]) => void,
): Promise<void> {
  for (let top = 0; top < out.height; top += STRIP_ROWS) {
    const rows = Math.min(STRIP_ROWS, out.height - top);
    const bands = buffers.next().map((band) => band.subarray(0, out.width * rows) as T);
    fill(top, rows, bands);
    await sink.write(0, top, out.width, rows, bands);
  }
}
