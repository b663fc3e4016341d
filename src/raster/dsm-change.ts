import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import gdal from 'gdal-async';
import type { AoiGrid } from '../geo/aoi-grid.js';
import { DSM_NODATA } from '../geo/asset-layout.js';
import { changeColourFile } from './change-ramp.js';
import { type PictureEncoding, writePicture } from './imagery.js';
import type { Scratch } from './scratch.js';
import { type GdalTuning, geoTiffOptions, warpToMemory } from './warp.js';

/**
 * Pixels handled between two turns of the event loop by the per-pixel loops below: 2^18 pixels
 * take 1-2 ms on an idle core (measured: 1M-pixel slices held the loop 20-50 ms on the shared
 * benchmark machine), so a 5000 x 5000 change (25 M pixels) never holds the loop for long.
 */
const SLICE = 1 << 18;

/** Height change on a grid: after - before per pixel (Float32, DSM_NODATA where either has none). */
export interface HeightChange {
  change: Float32Array;
  /** Pixels where both surfaces have a height. */
  compared: number;
}

/**
 * after - before on a grid, held by GDAL: an in-memory Float32 raster (MEM driver, nodata
 * DSM_NODATA) the caller closes, which frees its pixels there and then. Nothing of its size is a
 * JavaScript array: such an array is freed only when V8 next collects garbage (seconds later, after
 * the admission permit that paid for it is gone), so eight 5000 x 5000 changes left 200 MB each
 * behind them for others to count as free (docs/reliability.md, "Memory under bursts").
 */
export interface ChangeRaster {
  raster: gdal.Dataset;
  tally: ChangeTally;
}

/** Sums of a change, over the pixels where both surfaces have a height. */
export interface ChangeTally {
  compared: number;
  /** Pixels below -threshold and above +threshold, and the sums of |change| over them (metres). */
  lossPixels: number;
  lossSum: number;
  gainPixels: number;
  gainSum: number;
}

/**
 * One DSM's heights on the grid: exactly the warp of a DetailDsm download (warp.ts: bilinear,
 * the overview gdalwarp would choose, nodata kept), read out of the MEM raster in GDAL's pool.
 */
export async function heightsOnGrid(source: gdal.Dataset, grid: AoiGrid, tuning: GdalTuning): Promise<Float32Array> {
  const warped = await warpToMemory(source, grid, 'elevation', tuning);
  try {
    const band = await warped.bands.getAsync(1);
    return await band.pixels.readAsync(0, 0, grid.size, grid.size, new Float32Array(grid.size * grid.size));
  } finally {
    warped.close();
  }
}

/**
 * after - before on one grid: both DSMs warped side by side in GDAL's pool into MEM rasters, then
 * subtracted strip by strip (SLICE pixels at a time, through two strip-sized arrays) and written
 * over `after`'s raster, which is the answer; `before`'s is closed on the way out. With a
 * threshold the loss and gain are summed in the same pass.
 */
export async function changeRaster(
  after: gdal.Dataset,
  before: gdal.Dataset,
  grid: AoiGrid,
  tuning: GdalTuning,
  threshold = Number.POSITIVE_INFINITY,
): Promise<ChangeRaster> {
  const warped = await Promise.allSettled([
    warpToMemory(after, grid, 'elevation', tuning),
    warpToMemory(before, grid, 'elevation', tuning),
  ]);
  const [minuend, subtrahend] = warped.map((result) => (result.status === 'fulfilled' ? result.value : undefined));
  let kept = false;
  try {
    for (const result of warped) if (result.status === 'rejected') throw result.reason;
    const raster = minuend as gdal.Dataset;
    const tally = await subtractRasters(raster, subtrahend as gdal.Dataset, grid.size, threshold);
    kept = true;
    return { raster, tally };
  } finally {
    subtrahend?.close();
    if (!kept) minuend?.close();
  }
}

/** `a -= b` over two square Float32 rasters of `size`, strip by strip; returns the tally. */
async function subtractRasters(
  a: gdal.Dataset,
  b: gdal.Dataset,
  size: number,
  threshold: number,
): Promise<ChangeTally> {
  const [bandA, bandB] = await Promise.all([a.bands.getAsync(1), b.bands.getAsync(1)]);
  const rows = Math.max(1, Math.min(size, Math.floor(SLICE / size)));
  const stripA = new Float32Array(rows * size);
  const stripB = new Float32Array(rows * size);
  const tally = emptyTally();
  for (let y = 0; y < size; y += rows) {
    const height = Math.min(rows, size - y);
    const partA = height === rows ? stripA : stripA.subarray(0, height * size);
    const partB = height === rows ? stripB : stripB.subarray(0, height * size);
    await Promise.all([
      bandA.pixels.readAsync(0, y, size, height, partA),
      bandB.pixels.readAsync(0, y, size, height, partB),
    ]);
    subtractStrip(partA, partB, tally, threshold);
    await bandA.pixels.writeAsync(0, y, size, height, partA);
  }
  return tally;
}

function emptyTally(): ChangeTally {
  return { compared: 0, lossPixels: 0, lossSum: 0, gainPixels: 0, gainSum: 0 };
}

/** `minuend[i] -= subtrahend[i]`, nodata where either is; tallied beyond `threshold` either way. */
function subtractStrip(minuend: Float32Array, subtrahend: Float32Array, tally: ChangeTally, threshold: number): void {
  for (let i = 0; i < minuend.length; i++) {
    const a = minuend[i] as number;
    const b = subtrahend[i] as number;
    if (a === DSM_NODATA || b === DSM_NODATA) {
      minuend[i] = DSM_NODATA;
      continue;
    }
    const d = Math.fround(a - b);
    minuend[i] = d;
    tally.compared++;
    if (d < -threshold) {
      tally.lossPixels++;
      tally.lossSum -= d;
    } else if (d > threshold) {
      tally.gainPixels++;
      tally.gainSum += d;
    }
  }
}

/** The whole change raster as an array (map tiles: 256 x 256), the raster closed. */
export async function readChange(change: ChangeRaster, size: number): Promise<HeightChange> {
  try {
    const band = await change.raster.bands.getAsync(1);
    const values = await band.pixels.readAsync(0, 0, size, size, new Float32Array(size * size));
    return { change: values, compared: change.tally.compared };
  } finally {
    change.raster.close();
  }
}

/** `minuend[i] -= subtrahend[i]`, nodata where either is nodata; returns the pixels compared. */
export async function subtractInPlace(minuend: Float32Array, subtrahend: Float32Array): Promise<number> {
  let compared = 0;
  for (let start = 0; start < minuend.length; start += SLICE) {
    if (start > 0) await yieldToEventLoop();
    const end = Math.min(minuend.length, start + SLICE);
    for (let i = start; i < end; i++) {
      const a = minuend[i] as number;
      const b = subtrahend[i] as number;
      if (a === DSM_NODATA || b === DSM_NODATA) minuend[i] = DSM_NODATA;
      else {
        minuend[i] = a - b;
        compared++;
      }
    }
  }
  return compared;
}

/** Area and volume of the pixels that changed by more than the threshold one way. */
export interface ChangeMass {
  /** Ground square metres. */
  area: number;
  /** Cubic metres: the sum of |change| x pixel area over those pixels. */
  volume: number;
}

export interface ChangeFigures {
  /** Metres: a pixel counts as lost or gained when its height changed by more than this. */
  threshold: number;
  /** Ground square metres of one pixel, (2 x radius / size)^2. */
  pixelArea: number;
  /** The AOI square, m². */
  aoiArea: number;
  /** Where both surveys have heights, m², and as a share of the AOI (0..1). */
  comparedArea: number;
  comparedShare: number;
  loss: ChangeMass;
  gain: ChangeMass;
}

/** Figures of a change array: what was lost and gained by more than `threshold` metres. */
export async function changeFigures(change: HeightChange, grid: AoiGrid, threshold: number): Promise<ChangeFigures> {
  const tally = emptyTally();
  const values = change.change;
  for (let start = 0; start < values.length; start += SLICE) {
    if (start > 0) await yieldToEventLoop();
    const end = Math.min(values.length, start + SLICE);
    for (let i = start; i < end; i++) {
      const d = values[i] as number;
      if (d === DSM_NODATA) continue;
      if (d < -threshold) {
        tally.lossPixels++;
        tally.lossSum -= d;
      } else if (d > threshold) {
        tally.gainPixels++;
        tally.gainSum += d;
      }
    }
  }
  return figuresOf({ ...tally, compared: change.compared }, grid, threshold);
}

/** The figures of a tally made with `threshold` on `grid`. */
export function figuresOf(tally: ChangeTally, grid: AoiGrid, threshold: number): ChangeFigures {
  const pixelArea = grid.groundResolution * grid.groundResolution;
  const aoiPixels = grid.size * grid.size;
  return {
    threshold,
    pixelArea,
    aoiArea: aoiPixels * pixelArea,
    comparedArea: tally.compared * pixelArea,
    comparedShare: tally.compared / aoiPixels,
    loss: { area: tally.lossPixels * pixelArea, volume: tally.lossSum * pixelArea },
    gain: { area: tally.gainPixels * pixelArea, volume: tally.gainSum * pixelArea },
  };
}

/** The change GeoTIFF: as a DetailDsm tif (Float32 metres, nodata -9999, tiled, DEFLATE + predictor 3). */
export async function writeChangeGeoTiff(change: gdal.Dataset, tuning: GdalTuning, scratch: Scratch): Promise<Buffer> {
  const args = ['-of', 'GTiff'];
  for (const option of geoTiffOptions('elevation', tuning)) args.push('-co', option);
  const out = await gdal.translateAsync(scratch.path('change.tif'), change, args);
  try {
    await out.flushAsync();
  } finally {
    out.close();
  }
  return scratch.take('change.tif');
}

/**
 * The change as a picture: the diverging ramp (change-ramp.ts) by `gdaldem color-relief`, no data
 * transparent in png and black in jpg, as for every other picture. `change` is closed as soon as
 * the colours are made, before encoding.
 */
export async function writeChangePicture(
  change: gdal.Dataset,
  format: 'jpg' | 'png',
  encoding: PictureEncoding,
  scratch: Scratch,
): Promise<Buffer> {
  const ramp = scratch.write('change-ramp.txt', Buffer.from(changeColourFile()));
  let colour: gdal.Dataset | undefined;
  try {
    try {
      colour = await gdal.demAsync('in-memory', change, 'color-relief', ['-of', 'MEM', '-alpha'], ramp);
    } finally {
      change.close();
    }
    await writePicture(colour, format, encoding, scratch.path(`change.${format}`));
  } finally {
    colour?.close();
  }
  return scratch.take(`change.${format}`);
}
