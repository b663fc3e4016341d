import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import gdal from 'gdal-async';
import { DSM_NODATA } from '../geo/asset-layout.js';
import type { CogGrid } from '../geo/cog-grid.js';
import { collarVrt } from './collar.js';

export type ProgressFn = (fraction: number) => void;

/**
 * Working memory of one warp, in MB: the warper's chunk (`-wm`). GDAL's block cache is bounded
 * separately, for the whole ingest process (INGEST_GDAL_CACHE_MB, see boundIngestMemory).
 */
export const WARP_MEMORY_MB = 128;

/**
 * Grids up to this many bytes (4 a pixel: RGB + alpha, or Float32) are warped into memory and the
 * COG driver reads them from there: a shard (8,192 px a side, 256 MiB) never touches the disk
 * before its COG. Larger grids (a low COG of a very large survey, an old-style single COG) go
 * through a temporary tiled GeoTIFF, window by window.
 */
export const IN_MEMORY_WARP_BYTES = 320 * 1024 * 1024;

const COMMON_COG_OPTIONS = {
  BLOCKSIZE: '256',
  // Our grid already is aligned at every level; source overviews would not line up.
  OVERVIEWS: 'IGNORE_EXISTING',
  SPARSE_OK: 'TRUE',
  BIGTIFF: 'IF_SAFER',
};

// QUALITY comes with each job (CogJob.jpegQuality). Overviews take it too: the COG driver's OVERVIEW_QUALITY defaults to it.
const RGB_COG_OPTIONS = { ...COMMON_COG_OPTIONS, COMPRESS: 'JPEG', OVERVIEW_RESAMPLING: 'AVERAGE' };
const DSM_COG_OPTIONS = {
  ...COMMON_COG_OPTIONS,
  COMPRESS: 'DEFLATE',
  PREDICTOR: 'YES', // floating-point predictor (3) for Float32
  LEVEL: '6',
  OVERVIEW_RESAMPLING: 'AVERAGE',
};

/**
 * One source file as the warper reads it, after the collar pass. Plain data: jobs carry it to
 * worker processes.
 */
export interface WarpSource {
  path: string;
  /** 1-based colour (or elevation) bands. */
  bands: number[];
  alphaBand?: number;
  /** A per-dataset mask marks the valid pixels (JPEG COGs, shards). */
  hasInternalMask: boolean;
  /** A declared nodata value the band type can hold. */
  nodata?: number;
  /** Colour values to stretch from 0..max to 0..255. */
  scaleToByte?: { max: number };
  /**
   * The black collar's state raster (collar.ts), as a path GDAL opens (a local file, /vsis3/...):
   * the source is then read through collarVrt, colour bands plus an alpha band from the state.
   */
  collarState?: string;
}

/** Warp `sources` onto `grid` and write the COG at `output`. */
export interface CogJob {
  kind: 'rgb' | 'elevation';
  /** In order: where sources overlap, the later one's pixels are kept. */
  sources: WarpSource[];
  grid: CogGrid;
  output: string;
  /** GDAL threads for the warp and the compression. */
  threads: number;
  /** Write nothing when no source pixel lands on the grid (a shard outside the data). */
  skipEmpty: boolean;
  /** JPEG quality of imagery (1..100); heights are lossless. */
  jpegQuality: number;
}

export interface CogJobResult {
  /** False when the grid held no source pixel and `skipEmpty` was asked. */
  written: boolean;
}

/** How a source says where its data is, as the warper reads it without a VRT in between. */
type Validity = 'alpha' | 'mask' | 'nodata';

function directValidity(source: WarpSource): Validity | undefined {
  if (source.scaleToByte) return undefined;
  if (!source.bands.every((n, i) => n === i + 1)) return undefined;
  if (source.alphaBand !== undefined) return source.alphaBand === source.bands.length + 1 ? 'alpha' : undefined;
  if (source.hasInternalMask) return 'mask';
  return source.nodata !== undefined ? 'nodata' : 'mask';
}

/**
 * The source as bands plus an alpha band, whatever marked its data (alpha, mask, nodata, a collar
 * VRT's alpha): a VRT, no pixels copied. Used when the sources of one warp say it differently,
 * since the warper's -srcalpha / -srcnodata apply to all of them alike.
 */
async function withAlpha(src: gdal.Dataset, source: WarpSource, kind: CogJob['kind']): Promise<gdal.Dataset> {
  const args = ['-of', 'VRT'];
  for (const n of source.bands) args.push('-b', String(n));
  // `mask` is the band's mask: 0 where an internal mask or a nodata value says so, else 255.
  args.push('-b', source.alphaBand !== undefined ? String(source.alphaBand) : 'mask');
  args.push(`-colorinterp_${source.bands.length + 1}`, 'alpha');
  if (kind === 'rgb' && source.scaleToByte) {
    source.bands.forEach((_, i) => {
      args.push(`-scale_${i + 1}`, '0', String(source.scaleToByte?.max), '0', '255');
    });
  }
  return gdal.translateAsync(`/vsimem/${randomUUID()}.vrt`, src, args);
}

function warpArguments(job: CogJob, validity: Validity | undefined, inMemory: boolean): string[] {
  const { bounds } = job.grid;
  const args = [
    '-of',
    inMemory ? 'MEM' : 'GTiff',
    '-t_srs',
    'EPSG:3857',
    '-te',
    String(bounds.minX),
    String(bounds.minY),
    String(bounds.maxX),
    String(bounds.maxY),
    '-ts',
    String(job.grid.width),
    String(job.grid.height),
    // Bilinear: imagery and heights are continuous fields; nearest would stair-step edges.
    '-r',
    'bilinear',
    '-wo',
    'SAMPLE_GRID=YES',
    // Window by window: the warper holds one chunk of at most -wm MB, whatever the raster's size.
    '-wm',
    String(WARP_MEMORY_MB),
    '-wo',
    `NUM_THREADS=${job.threads}`,
  ];
  if (job.threads > 1) args.push('-multi');
  // undefined: every source went through withAlpha.
  if (validity === undefined || validity === 'alpha') args.push('-srcalpha');
  // A nodata value the data type cannot hold would match nothing, so ignore it explicitly.
  else if (validity === 'mask') args.push('-srcnodata', 'None');
  if (job.kind === 'rgb') args.push('-ot', 'Byte', '-dstalpha');
  else args.push('-ot', 'Float32', '-dstnodata', String(DSM_NODATA));
  if (!inMemory) {
    for (const option of INTERMEDIATE_OPTIONS) args.push('-co', option);
  }
  return args;
}

/**
 * The intermediate full-resolution raster of a grid too large for memory: tiled like the COG,
 * compressed losslessly (ZSTD, fast), empty tiles left out (SPARSE_OK).
 */
const INTERMEDIATE_OPTIONS = [
  'TILED=YES',
  'BLOCKXSIZE=256',
  'BLOCKYSIZE=256',
  'COMPRESS=ZSTD',
  'ZSTD_LEVEL=1',
  'SPARSE_OK=TRUE',
  'BIGTIFF=IF_SAFER',
];

/** Whether any pixel of the warped grid holds data (its alpha band, or a height). */
async function holdsData(warped: gdal.Dataset, kind: CogJob['kind']): Promise<boolean> {
  const band = warped.bands.get(kind === 'rgb' ? 4 : 1);
  try {
    const stats = await band.computeStatisticsAsync(false);
    return kind === 'rgb' ? stats.max > 0 : true;
  } catch {
    return false; // GDAL: "no valid pixels found"
  }
}

/**
 * Warps the job's sources onto its aligned EPSG:3857 grid and writes the COG: JPEG (YCbCr) with an
 * internal mask for imagery (the COG driver turns the warper's alpha into the mask), Float32
 * DEFLATE with a declared nodata for elevation, with `grid.overviewCount` overviews, each of whose
 * tiles is a map tile. Each source pixel is warped once: into memory for a grid up to
 * IN_MEMORY_WARP_BYTES (a shard), otherwise into a temporary tiled GeoTIFF next to the output,
 * which the COG driver then reads block by block.
 */
export async function writeGridCog(job: CogJob, progress: ProgressFn = () => {}): Promise<CogJobResult> {
  const inMemory = job.grid.width * job.grid.height * 4 <= IN_MEMORY_WARP_BYTES;
  const intermediate = `${job.output}.warped.tif`;
  const opened: gdal.Dataset[] = [];
  const temporary: gdal.Dataset[] = [];
  try {
    const sources = job.sources.map((source) =>
      source.collarState
        ? { ...source, bands: source.bands.map((_, i) => i + 1), alphaBand: source.bands.length + 1, nodata: undefined }
        : source,
    );
    for (const source of job.sources) {
      // A collar VRT is opened from its XML text: nothing written beside the source.
      const name = source.collarState ? await collarVrt(source, source.collarState) : source.path;
      opened.push(await gdal.openAsync(name));
    }
    const validities = sources.map(directValidity);
    const shared = validities.every((v) => v !== undefined && v === validities[0]) ? validities[0] : undefined;
    const inputs: gdal.Dataset[] = [];
    for (const [i, source] of sources.entries()) {
      const src = opened[i] as gdal.Dataset;
      if (shared !== undefined) inputs.push(src);
      else {
        const vrt = await withAlpha(src, source, job.kind);
        temporary.push(vrt);
        inputs.push(vrt);
      }
    }
    const warped = await gdal.warpAsync(
      inMemory ? 'in-memory' : intermediate,
      null,
      inputs,
      warpArguments(job, shared, inMemory),
      {
        progress_cb: (complete: number) => progress(complete * 0.5),
      },
    );
    temporary.push(warped);
    if (job.skipEmpty && !(await holdsData(warped, job.kind))) {
      progress(1);
      return { written: false };
    }
    const options = {
      ...(job.kind === 'rgb' ? { ...RGB_COG_OPTIONS, QUALITY: String(job.jpegQuality) } : DSM_COG_OPTIONS),
      OVERVIEW_COUNT: String(job.grid.overviewCount),
      NUM_THREADS: String(job.threads),
    };
    const cog = await gdal.drivers.get('COG').createCopyAsync(job.output, warped, options, false, {
      progress_cb: (complete: number) => progress(0.5 + complete * 0.5),
    });
    cog.close();
    return { written: true };
  } finally {
    for (const ds of temporary.reverse()) ds.close();
    for (const ds of opened) ds.close();
    await rm(intermediate, { force: true });
  }
}
