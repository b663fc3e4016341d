import { endianness } from 'node:os';
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
 * after - before on one grid, written over `after` (one raster less in memory). The two warps
 * run side by side in GDAL's pool; the subtraction is plain arithmetic, in slices.
 */
export async function heightChange(
  after: gdal.Dataset,
  before: gdal.Dataset,
  grid: AoiGrid,
  tuning: GdalTuning,
): Promise<HeightChange> {
  const [change, baseline] = await Promise.all([
    heightsOnGrid(after, grid, tuning),
    heightsOnGrid(before, grid, tuning),
  ]);
  return { change, compared: await subtractInPlace(change, baseline) };
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

/** Figures of a change raster: what was lost and gained by more than `threshold` metres. */
export async function changeFigures(change: HeightChange, grid: AoiGrid, threshold: number): Promise<ChangeFigures> {
  const pixelArea = grid.groundResolution * grid.groundResolution;
  let lossPixels = 0;
  let gainPixels = 0;
  let lossSum = 0;
  let gainSum = 0;
  const values = change.change;
  for (let start = 0; start < values.length; start += SLICE) {
    if (start > 0) await yieldToEventLoop();
    const end = Math.min(values.length, start + SLICE);
    for (let i = start; i < end; i++) {
      const d = values[i] as number;
      if (d === DSM_NODATA) continue;
      if (d < -threshold) {
        lossPixels++;
        lossSum -= d;
      } else if (d > threshold) {
        gainPixels++;
        gainSum += d;
      }
    }
  }
  const aoiPixels = grid.size * grid.size;
  return {
    threshold,
    pixelArea,
    aoiArea: aoiPixels * pixelArea,
    comparedArea: change.compared * pixelArea,
    comparedShare: change.compared / aoiPixels,
    loss: { area: lossPixels * pixelArea, volume: lossSum * pixelArea },
    gain: { area: gainPixels * pixelArea, volume: gainSum * pixelArea },
  };
}

/**
 * The change as a GDAL raster without copying it: the Float32 array handed to /vsimem as a raw
 * file, described by a VRT that places it on the grid (EPSG:3857, nodata -9999, this machine's
 * byte order). GDAL reads it in place, so the caller must keep `change` alive until every dataset
 * opened on it is closed.
 */
export function changeRasterVrt(change: Float32Array, grid: AoiGrid, scratch: Scratch): string {
  const raw = scratch.write('change.f32', Buffer.from(change.buffer, change.byteOffset, change.byteLength));
  scratch.write(
    'change.vrt',
    Buffer.from(`<VRTDataset rasterXSize="${grid.size}" rasterYSize="${grid.size}">
  <SRS>EPSG:3857</SRS>
  <GeoTransform>${grid.geoTransform.join(', ')}</GeoTransform>
  <VRTRasterBand dataType="Float32" band="1" subClass="VRTRawRasterBand">
    <NoDataValue>${DSM_NODATA}</NoDataValue>
    <SourceFilename relativeToVRT="0">${raw}</SourceFilename>
    <ImageOffset>0</ImageOffset>
    <PixelOffset>4</PixelOffset>
    <LineOffset>${4 * grid.size}</LineOffset>
    <ByteOrder>${endianness() === 'LE' ? 'LSB' : 'MSB'}</ByteOrder>
  </VRTRasterBand>
</VRTDataset>
`),
  );
  return scratch.path('change.vrt');
}

/** The change GeoTIFF: as a DetailDsm tif (Float32 metres, nodata -9999, tiled, DEFLATE + predictor 3). */
export async function writeChangeGeoTiff(
  change: Float32Array,
  grid: AoiGrid,
  tuning: GdalTuning,
  scratch: Scratch,
): Promise<Buffer> {
  const raster = await gdal.openAsync(changeRasterVrt(change, grid, scratch));
  try {
    const args = ['-of', 'GTiff'];
    for (const option of geoTiffOptions('elevation', tuning)) args.push('-co', option);
    const out = await gdal.translateAsync(scratch.path('change.tif'), raster, args);
    try {
      await out.flushAsync();
    } finally {
      out.close();
    }
  } finally {
    raster.close();
  }
  return scratch.take('change.tif');
}

/**
 * The change as a picture: the diverging ramp (change-ramp.ts) by `gdaldem color-relief`, no data
 * transparent in png and black in jpg, as for every other picture.
 */
export async function writeChangePicture(
  change: Float32Array,
  grid: AoiGrid,
  format: 'jpg' | 'png',
  encoding: PictureEncoding,
  scratch: Scratch,
): Promise<Buffer> {
  const raster = await gdal.openAsync(changeRasterVrt(change, grid, scratch));
  const ramp = scratch.write('change-ramp.txt', Buffer.from(changeColourFile()));
  let colour: gdal.Dataset | undefined;
  try {
    colour = await gdal.demAsync('in-memory', raster, 'color-relief', ['-of', 'MEM', '-alpha'], ramp);
    await writePicture(colour, format, encoding, scratch.path(`change.${format}`));
  } finally {
    colour?.close();
    raster.close();
  }
  return scratch.take(`change.${format}`);
}
