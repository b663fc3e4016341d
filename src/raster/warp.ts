import gdal from 'gdal-async';
import type { AoiGrid } from '../geo/aoi-grid.js';
import { DSM_NODATA } from '../geo/asset-layout.js';

/** How hard GDAL may work on one request. */
export interface GdalTuning {
  /** GDAL NUM_THREADS for the warp kernel and for GeoTIFF compression: a count or 'ALL_CPUS'. */
  threads: string;
  /**
   * The warper's working memory per request, MB (`gdalwarp -wm`): the size of its chunks. 64,
   * 128 and 256 measured the same speed and peak memory on 5000 x 5000 outputs.
   */
  warpMemoryMb: number;
  /**
   * GeoTIFF DEFLATE level (libdeflate, 1..12). 3, not GDAL's 6: measured on a 5000 x 5000 RGBA
   * ortho, 1.0 s instead of 3.4 s for a 5% larger file (34.9 MB vs 33.3 MB); on heights the
   * sizes differ by 1%. Sending 1.6 MB more costs less than 2.4 s of a core.
   */
  deflateLevel: number;
}

export const DEFAULT_TUNING: GdalTuning = { threads: 'ALL_CPUS', warpMemoryMb: 128, deflateLevel: 3 };

export type PixelKind = 'rgb' | 'elevation';

/**
 * `gdalwarp` arguments that put an asset's COG onto the AOI grid. The COG is already EPSG:3857,
 * so this is pure resampling: the transform is affine and exact.
 *
 * - `-te/-ts`: the AOI square and the output size, which fix the pixel size (see aoiGrid).
 * - Overviews: gdalwarp's default (`-ovr AUTO`) reads the coarsest COG level that is still at
 *   least as fine as the output, so a 100 px image of a 0.3 m survey reads a few overview tiles,
 *   not the full-resolution level, and never upsamples a coarse level when a finer one exists.
 * - `-r bilinear`: both imagery and heights are continuous fields. Nearest would stair-step and
 *   shift edges by up to half a source pixel; cubic and lanczos overshoot at sharp edges
 *   (roof lines, the edge of the data), inventing heights and colours that are in no source
 *   pixel. Bilinear output is always a weighted mean of the neighbouring valid source pixels,
 *   and when shrinking (up to 2x, since the overview is chosen) GDAL widens its footprint so it
 *   averages rather than aliases. It is also what ingest used for the COG.
 * - Imagery: the COG's internal mask is the source validity; `-dstalpha` carries it into an alpha
 *   band (255 where the survey has data). Elevation: nodata in, nodata (-9999) out.
 * - Pixels the survey does not cover stay at the initial value: alpha 0 / nodata. Nothing is
 *   invented outside the survey.
 */
export function warpArguments(grid: AoiGrid, kind: PixelKind, tuning: GdalTuning): string[] {
  const { bounds: b, size } = grid;
  const args = ['-t_srs', 'EPSG:3857', '-te', `${b.minX}`, `${b.minY}`, `${b.maxX}`, `${b.maxY}`];
  args.push('-ts', `${size}`, `${size}`, '-r', 'bilinear');
  if (kind === 'rgb') args.push('-ot', 'Byte', '-dstalpha');
  else args.push('-ot', 'Float32', '-dstnodata', `${DSM_NODATA}`);
  // -multi overlaps reading/decoding source tiles with the warp kernel; NUM_THREADS splits the kernel.
  args.push('-multi', '-wo', `NUM_THREADS=${tuning.threads}`, '-wm', `${tuning.warpMemoryMb}`);
  return args;
}

/** GeoTIFF creation options (decisions.md: tiled, DEFLATE; predictor 2 for bytes, 3 for floats). */
export function geoTiffOptions(kind: PixelKind, tuning: GdalTuning): string[] {
  const options = [
    'TILED=YES',
    'BLOCKXSIZE=256',
    'BLOCKYSIZE=256',
    'COMPRESS=DEFLATE',
    `NUM_THREADS=${tuning.threads}`,
  ];
  // BIGTIFF only if needed: a 5000 x 5000 RGBA image is 100 MB uncompressed, far below 4 GB.
  options.push('BIGTIFF=IF_SAFER', `ZLEVEL=${tuning.deflateLevel}`);
  if (kind === 'rgb') options.push('PREDICTOR=2', 'PHOTOMETRIC=RGB', 'ALPHA=UNASSOCIATED');
  else options.push('PREDICTOR=3');
  return options;
}

/**
 * Warps straight into a compressed GeoTIFF at `path` (a /vsimem file): one pass, no intermediate
 * raster. The warper flushes the output before returning, and the flush below only confirms it,
 * so closing never compresses on the event loop.
 */
export async function warpToGeoTiff(
  source: gdal.Dataset,
  grid: AoiGrid,
  kind: PixelKind,
  tuning: GdalTuning,
  path: string,
): Promise<void> {
  const args = ['-of', 'GTiff', ...warpArguments(grid, kind, tuning)];
  for (const option of geoTiffOptions(kind, tuning)) args.push('-co', option);
  const out = await gdal.warpAsync(path, null, [source], args);
  try {
    await out.flushAsync();
  } finally {
    out.close();
  }
}

/**
 * Warps into an in-memory raster (MEM driver) for the formats GDAL can only write by copying
 * (JPEG, PNG) and for the DSM picture. The caller closes it.
 */
export async function warpToMemory(
  source: gdal.Dataset,
  grid: AoiGrid,
  kind: PixelKind,
  tuning: GdalTuning,
): Promise<gdal.Dataset> {
  // The MEM driver ignores the name; gdal-async requires one.
  return gdal.warpAsync('in-memory', null, [source], ['-of', 'MEM', ...warpArguments(grid, kind, tuning)]);
}

/**
 * Whether a raster rendered on an AOI grid holds any pixel of the survey: some alpha above 0
 * (imagery, band 4 from `-dstalpha`), or some height that is not nodata (elevation). GDAL's
 * statistics read the band once in its thread pool; on a MEM raster that costs a few ms at
 * 5000 x 5000, on a compressed GeoTIFF a decompression.
 */
export async function holdsSurveyPixels(raster: gdal.Dataset, kind: PixelKind): Promise<boolean> {
  const band = await raster.bands.getAsync(kind === 'rgb' ? 4 : 1);
  if (kind === 'rgb') return (await band.computeStatisticsAsync(false)).max > 0;
  try {
    return Number.isFinite((await band.computeStatisticsAsync(false)).min);
  } catch {
    return false; // GDAL: "no valid pixels found"
  }
}

/** holdsSurveyPixels of a GeoTIFF written at `path`. */
export async function fileHoldsSurveyPixels(path: string, kind: PixelKind): Promise<boolean> {
  const raster = await gdal.openAsync(path);
  try {
    return await holdsSurveyPixels(raster, kind);
  } finally {
    raster.close();
  }
}
