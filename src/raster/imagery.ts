import gdal from 'gdal-async';
import type { AoiGrid } from '../geo/aoi-grid.js';
import type { ImageFormat } from './formats.js';
import type { Scratch } from './scratch.js';
import { fileHoldsSurveyPixels, type GdalTuning, holdsSurveyPixels, warpToGeoTiff, warpToMemory } from './warp.js';

export interface PictureEncoding {
  /** JPEG quality 1..100. */
  jpegQuality: number;
  /**
   * PNG zlib level 1..9. 3, not zlib's 6: measured on a 5000 x 5000 RGBA ortho, 3.5 s instead of
   * 8.3 s (PNG encoding is single-threaded) for an 8% larger file (33.3 MB vs 30.9 MB).
   */
  pngLevel: number;
}

export const DEFAULT_ENCODING: PictureEncoding = { jpegQuality: 90, pngLevel: 3 };

/**
 * TrueOrtho / Vert on the AOI grid.
 * - tif: RGB + unassociated alpha (0 where the survey has no data), warped straight into the file.
 * - png: RGBA, so no-data is transparent.
 * - jpg: RGB. JPEG has no transparency; no-data pixels are black (0, 0, 0), the warper's initial
 *   value. Black is GIS's conventional no-data fill (gdalwarp, `nearblack`), and nadir's own
 *   ingest masks a black collar connected to the image edge, so a jpg fed back in keeps its
 *   no-data as no-data. The jgw places it; use png or tif to get an explicit mask.
 */
export async function renderImagery(
  source: gdal.Dataset,
  grid: AoiGrid,
  format: ImageFormat,
  tuning: GdalTuning,
  encoding: PictureEncoding,
  scratch: Scratch,
  checkEmpty = false,
): Promise<{ body: Buffer; empty: boolean }> {
  const name = `image.${format}`;
  if (format === 'tif') {
    await warpToGeoTiff(source, grid, 'rgb', tuning, scratch.path(name));
    const empty = checkEmpty && !(await fileHoldsSurveyPixels(scratch.path(name), 'rgb'));
    return { body: scratch.take(name), empty };
  }
  const warped = await warpToMemory(source, grid, 'rgb', tuning);
  let empty = false;
  try {
    // Before encoding: a JPEG keeps no alpha to tell afterwards.
    empty = checkEmpty && !(await holdsSurveyPixels(warped, 'rgb'));
    if (!empty) await writePicture(warped, format, encoding, scratch.path(name));
  } finally {
    warped.close();
  }
  return { body: empty ? Buffer.alloc(0) : scratch.take(name), empty };
}

/**
 * Encodes an RGBA raster as PNG (all four bands) or JPEG (the three colour bands). Both drivers
 * only write by copying, which gdal-async runs in its thread pool.
 */
export async function writePicture(
  rgba: gdal.Dataset,
  format: 'jpg' | 'png',
  encoding: PictureEncoding,
  path: string,
): Promise<void> {
  const args =
    format === 'png'
      ? ['-of', 'PNG', '-co', `ZLEVEL=${encoding.pngLevel}`]
      : // Plain baseline JPEG any client reads: no GDAL-specific mask appended after the image.
        ['-of', 'JPEG', '-b', '1', '-b', '2', '-b', '3', '-co', `QUALITY=${encoding.jpegQuality}`];
  if (format === 'jpg') args.push('-co', 'INTERNAL_MASK=NO');
  const out = await gdal.translateAsync(path, rgba, args);
  out.close();
}
