import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import gdal from 'gdal-async';
import { type CogGrid, planCogGrid } from '../geo/cog-grid.js';
import { maskBlackCollar } from './collar.js';
import type { SourceRaster } from './source.js';

/** Declared nodata of every DetailDsm COG nadir writes. */
export const DSM_NODATA = -9999;

export type ProgressFn = (fraction: number) => void;

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
    'VRT',
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
  ];
  // A nodata value the data type cannot hold would match nothing, so ignore it explicitly.
  if (source.nodata === undefined) args.push('-srcnodata', 'None');
  if (source.alphaBand) args.push('-srcalpha');
  if (source.kind === 'rgb') args.push('-ot', 'Byte', '-dstalpha');
  else args.push('-ot', 'Float32', '-dstnodata', String(DSM_NODATA));
  return args;
}

/** Imagery that says nothing about where its data ends gets its black collar masked. */
async function withCollarMask(source: SourceRaster, workDir: string): Promise<SourceRaster> {
  if (source.kind !== 'rgb' || source.alphaBand || source.hasInternalMask) return source;
  const vrt = await maskBlackCollar(source, join(workDir, `${source.type}.collar`));
  if (!vrt) return source;
  return { ...source, path: vrt, bands: [1, 2, 3], alphaBand: 4, nodata: undefined };
}

export interface WrittenCog {
  grid: CogGrid;
  path: string;
}

/**
 * Reprojects a source onto its aligned EPSG:3857 grid and writes it as a COG: JPEG (YCbCr) with
 * an internal mask for imagery (the COG driver turns the warper's alpha into the mask), Float32
 * DEFLATE with a declared nodata for elevation.
 */
export async function writeCog(
  original: SourceRaster,
  outPath: string,
  workDir: string,
  progress?: ProgressFn,
): Promise<WrittenCog> {
  const grid = planCogGrid(original.mercatorExtent, original.mercatorResolution);
  const source = await withCollarMask(original, workDir);
  const src = await gdal.openAsync(source.path);
  const temporary: gdal.Dataset[] = [];
  try {
    const selected = await selectBands(src, source);
    if (selected !== src) temporary.push(selected);
    const warped = await gdal.warpAsync(`/vsimem/${randomUUID()}.vrt`, null, [selected], warpArguments(source, grid));
    temporary.push(warped);
    const options = {
      ...(source.kind === 'rgb' ? RGB_COG_OPTIONS : DSM_COG_OPTIONS),
      OVERVIEW_COUNT: String(grid.overviewCount),
    };
    const jsOptions = progress ? { progress_cb: (complete: number) => progress(complete) } : undefined;
    const cog = await gdal.drivers.get('COG').createCopyAsync(outPath, warped, options, false, jsOptions);
    cog.close();
    return { grid, path: outPath };
  } finally {
    for (const ds of temporary.reverse()) ds.close();
    src.close();
  }
}
