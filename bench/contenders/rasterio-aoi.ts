/**
 * rasterio_aoi.py (an AOI download written with rasterio, rio-tiler style) as one process: wall
 * time including Python's start-up and imports, peak RSS from /usr/bin/time. Debian's python3,
 * explicitly: a pyenv or venv python on PATH would not have Debian's rasterio.
 */
import { join } from 'node:path';
import type { Bounds } from '../../src/geo/web-mercator.js';
import { DEFAULT_TUNING } from '../../src/raster/index.js';
import { measureCommands, type Sample } from '../raster/measure.js';

export const PYTHON = '/usr/bin/python3';
const SCRIPT = join(import.meta.dirname, 'rasterio_aoi.py');

export interface RasterioAoi {
  cog: string;
  /** EPSG:3857. */
  bounds: Bounds;
  size: number;
  /** Decided by `out`'s extension: .tif or .jpg. */
  out: string;
  /** 'read': rio-tiler's part() (windowed read, RasterIO resampling); 'warp': GDAL's warper, gdalwarp's pixels. */
  method?: 'read' | 'warp';
  deflateLevel?: number;
  jpegQuality?: number;
}

export function rasterioAoiCommand(aoi: RasterioAoi): string[] {
  const { minX, minY, maxX, maxY } = aoi.bounds;
  return [
    PYTHON,
    SCRIPT,
    aoi.cog,
    ...[minX, minY, maxX, maxY].map(String),
    `${aoi.size}`,
    aoi.out,
    ...['--method', aoi.method ?? 'read', '--deflate-level', `${aoi.deflateLevel ?? DEFAULT_TUNING.deflateLevel}`],
    ...['--quality', `${aoi.jpegQuality ?? 90}`],
  ];
}

export function measureRasterioAoi(aoi: RasterioAoi): Promise<Sample> {
  return measureCommands([rasterioAoiCommand(aoi)], aoi.out, aoi.out);
}
