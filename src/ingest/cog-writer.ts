import { randomUUID } from 'node:crypto';
import { copyFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import gdal from 'gdal-async';
import { type CogGrid, planCogGrid } from '../geo/cog-grid.js';
import { alignedCogGrid } from './aligned-cog.js';
import { maskBlackCollar } from './collar.js';
import type { SourceRaster } from './source.js';

/** Declared nodata of every DetailDsm COG nadir writes. */
export const DSM_NODATA = -9999;

export type ProgressFn = (fraction: number) => void;

/**
 * Working memory of one ingest, in MB: the warper's chunk (`-wm`). GDAL's block cache is bounded
 * separately, for the whole ingest process (INGEST_GDAL_CACHE_MB, see boundIngestMemory).
 */
export const WARP_MEMORY_MB = 128;

const COMMON_COG_OPTIONS = {
  BLOCKSIZE: '256',
  // Our grid already pads to aligned overview levels; source overviews would not line up.
  OVERVIEWS: 'IGNORE_EXISTING',
  SPARSE_OK: 'TRUE',
  NUM_THREADS: 'ALL_CPUS',
  BIGTIFF: 'IF_SAFER',
};

const RGB_COG_OPTIONS = { ...COMMON_COG_OPTIONS, COMPRESS: 'JPEG', QUALITY: '90', OVERVIEW_RESAMPLING: 'AVERAGE' };
const DSM_COG_OPTIONS = {
  ...COMMON_COG_OPTIONS,
  COMPRESS: 'DEFLATE',
  PREDICTOR: 'YES', // floating-point predictor (3) for Float32
  LEVEL: '6',
  OVERVIEW_RESAMPLING: 'AVERAGE',
};

/** Band selection and 0..255 scaling, as a VRT the warper can read (no pixels copied). */
async function selectBands(src: gdal.Dataset, source: SourceRaster): Promise<gdal.Dataset> {
  const plain =
    source.bands.every((n, i) => n === i + 1) && source.bands.length + (source.alphaBand ? 1 : 0) === src.bands.count();
  if (plain && !source.scaleToByte) return src;
  const args = ['-of', 'VRT'];
  for (const n of source.bands) args.push('-b', String(n));
  if (source.alphaBand) args.push('-b', String(source.alphaBand));
  if (source.scaleToByte) {
    source.bands.forEach((_, i) => {
      args.push(`-scale_${i + 1}`, '0', String(source.scaleToByte?.max), '0', '255');
    });
  }
  return gdal.translateAsync(`/vsimem/${randomUUID()}.vrt`, src, args);
}

function warpArguments(source: SourceRaster, grid: CogGrid): string[] {
  const { bounds } = grid;
  const args = [
    '-of',
    'GTiff',
    '-t_srs',
    'EPSG:3857',
    '-te',
    String(bounds.minX),
    String(bounds.minY),
    String(bounds.maxX),
    String(bounds.maxY),
    '-ts',
    String(grid.width),
    String(grid.height),
    // Bilinear: imagery and heights are continuous fields; nearest would stair-step edges.
    '-r',
    'bilinear',
    '-wo',
    'SAMPLE_GRID=YES',
    // Window by window: the warper holds one chunk of at most -wm MB, whatever the raster's size.
    '-wm',
    String(WARP_MEMORY_MB),
    '-multi',
    '-wo',
    'NUM_THREADS=ALL_CPUS',
  ];
  // A nodata value the data type cannot hold would match nothing, so ignore it explicitly.
  if (source.nodata === undefined) args.push('-srcnodata', 'None');
  if (source.alphaBand) args.push('-srcalpha');
  if (source.kind === 'rgb') args.push('-ot', 'Byte', '-dstalpha');
  else args.push('-ot', 'Float32', '-dstnodata', String(DSM_NODATA));
  return args;
}

/** Imagery that says nothing about where its data ends gets its black collar masked. */
async function withCollarMask(source: SourceRaster, workDir: string, progress: ProgressFn): Promise<SourceRaster> {
  if (source.kind !== 'rgb' || source.alphaBand || source.hasInternalMask) return source;
  const vrt = await maskBlackCollar(source, join(workDir, source.type), progress);
  if (!vrt) return source;
  return { ...source, path: vrt, bands: [1, 2, 3], alphaBand: 4, nodata: undefined };
}

export interface WrittenCog {
  grid: CogGrid;
  path: string;
  /** True when the source already was such a COG and its file was stored as it is. */
  copied: boolean;
}

/**
 * The intermediate full-resolution raster the warper writes, window by window: tiled like the
 * COG, compressed losslessly (ZSTD, fast), empty tiles left out (SPARSE_OK).
 */
const INTERMEDIATE_OPTIONS = ['TILED=YES', 'BLOCKXSIZE=256', 'BLOCKYSIZE=256', 'COMPRESS=ZSTD', 'ZSTD_LEVEL=1'];

/**
 * Reprojects a source onto its aligned EPSG:3857 grid and writes it as a COG: JPEG (YCbCr) with
 * an internal mask for imagery (the COG driver turns the warper's alpha into the mask), Float32
 * DEFLATE with a declared nodata for elevation. Streams: the warper writes a temporary tiled
 * GeoTIFF one chunk at a time (-wm), then the COG driver reads it back block by block, building
 * the overviews in its own temporary file. A source that already is such a COG is copied as it is.
 */
export async function writeCog(
  original: SourceRaster,
  outPath: string,
  workDir: string,
  progress: ProgressFn = () => {},
): Promise<WrittenCog> {
  const aligned = await alignedCogGrid(original);
  if (aligned) {
    await copyFile(original.path, outPath);
    progress(1);
    return { grid: aligned, path: outPath, copied: true };
  }
  const grid = planCogGrid(original.mercatorExtent, original.mercatorResolution);
  // Shares of the work: the collar pass reads the source once, the warp reads it again and
  // writes every pixel, the COG driver reads them twice (overviews, then the copy) and encodes.
  const needsCollar = original.kind === 'rgb' && !original.alphaBand && !original.hasInternalMask;
  const [collarShare, warpShare] = needsCollar ? [0.15, 0.45] : [0, 0.5];
  const source = await withCollarMask(original, workDir, (f) => progress(f * collarShare));
  const src = await gdal.openAsync(source.path);
  const temporary: gdal.Dataset[] = [];
  const intermediate = join(workDir, `${original.type}.warped.tif`);
  try {
    const selected = await selectBands(src, source);
    if (selected !== src) temporary.push(selected);
    const args = warpArguments(source, grid);
    for (const option of [...INTERMEDIATE_OPTIONS, 'SPARSE_OK=TRUE', 'BIGTIFF=IF_SAFER']) args.push('-co', option);
    const warped = await gdal.warpAsync(intermediate, null, [selected], args, {
      progress_cb: (complete: number) => progress(collarShare + complete * warpShare),
    });
    temporary.push(warped);
    const options = {
      ...(source.kind === 'rgb' ? RGB_COG_OPTIONS : DSM_COG_OPTIONS),
      OVERVIEW_COUNT: String(grid.overviewCount),
    };
    const base = collarShare + warpShare;
    const cog = await gdal.drivers.get('COG').createCopyAsync(outPath, warped, options, false, {
      progress_cb: (complete: number) => progress(base + complete * (1 - base)),
    });
    cog.close();
    return { grid, path: outPath, copied: false };
  } finally {
    for (const ds of temporary.reverse()) ds.close();
    src.close();
    await rm(intermediate, { force: true });
  }
}
