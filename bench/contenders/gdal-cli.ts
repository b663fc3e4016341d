/**
 * The GDAL command line making an AOI raster from a COG: wall time (process start-up included) and
 * peak RSS from /usr/bin/time, through bench/raster/measure.ts's `measureCommands`.
 *
 * The commands are those bench/raster/run.ts compares nadir with (its `cliCommands` is private to that
 * script, which runs on import), written here for any bounds and size: nadir's creation options,
 * DEFLATE level included, so the files are the same; "tuned" adds what nadir itself passes GDAL.
 */
import type { Bounds } from '../../src/geo/web-mercator.js';
import { DEFAULT_TUNING } from '../../src/raster/index.js';
import { measureCommands, type Sample } from '../raster/measure.js';

export interface CliAoi {
  cog: string;
  /** EPSG:3857. */
  bounds: Bounds;
  size: number;
  format: 'tif' | 'jpg';
  /** RGB imagery with a mask (alpha out) or a float DSM (nodata out). */
  kind?: 'rgb' | 'dsm';
  /** -multi, NUM_THREADS=ALL_CPUS and -wm as nadir uses them. */
  tuned?: boolean;
  jpegQuality?: number;
}

/** gdalwarp to GeoTIFF, or gdalwarp -of VRT then gdal_translate -of JPEG. */
export function gdalCliCommands(aoi: CliAoi, out: string): string[][] {
  const { minX, minY, maxX, maxY } = aoi.bounds;
  const rgb = (aoi.kind ?? 'rgb') === 'rgb';
  const warp = ['-q', '-overwrite', '-t_srs', 'EPSG:3857', '-te', `${minX}`, `${minY}`, `${maxX}`, `${maxY}`];
  warp.push('-ts', `${aoi.size}`, `${aoi.size}`, '-r', 'bilinear');
  warp.push(...(rgb ? ['-ot', 'Byte', '-dstalpha'] : ['-ot', 'Float32', '-dstnodata', '-9999']));
  if (aoi.tuned) warp.push('-multi', '-wo', 'NUM_THREADS=ALL_CPUS', '-wm', `${DEFAULT_TUNING.warpMemoryMb}`);
  if (aoi.format === 'jpg') {
    const vrt = `${out}.vrt`;
    const quality = `QUALITY=${aoi.jpegQuality ?? 90}`;
    return [
      ['gdalwarp', ...warp, '-of', 'VRT', aoi.cog, vrt],
      ['gdal_translate', '-q', '-of', 'JPEG', '-b', '1', '-b', '2', '-b', '3', '-co', quality, vrt, out],
    ];
  }
  const co = ['TILED=YES', 'COMPRESS=DEFLATE', `ZLEVEL=${DEFAULT_TUNING.deflateLevel}`];
  co.push(...(rgb ? ['PREDICTOR=2', 'PHOTOMETRIC=RGB', 'ALPHA=YES'] : ['PREDICTOR=3']));
  if (aoi.tuned) co.push('NUM_THREADS=ALL_CPUS');
  return [['gdalwarp', ...warp, ...co.flatMap((option) => ['-co', option]), aoi.cog, out]];
}

/** One run; `out` is overwritten (and its .vrt left beside it for jpg). */
export function measureGdalCli(aoi: CliAoi, out: string): Promise<Sample> {
  return measureCommands(gdalCliCommands(aoi, out), out, out);
}
