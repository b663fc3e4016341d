import { access } from 'node:fs/promises';
import gdal from 'gdal-async';
import type { ContentType } from '../catalogue/survey.js';
import { NadirError, oneLine } from '../errors.js';
import { type Bounds, groundScale, mercatorToLonLat } from '../geo/web-mercator.js';

/** What ingest learned about one source raster before writing anything. */
export interface SourceRaster {
  type: ContentType;
  path: string;
  kind: 'rgb' | 'elevation';
  width: number;
  height: number;
  /** 1-based band numbers of the colour (or elevation) bands to use. */
  bands: number[];
  alphaBand?: number;
  /** An internal (per-dataset) mask marks the valid pixels, as in JPEG COGs. */
  hasInternalMask: boolean;
  /** The declared nodata value when it can actually occur in the band's data type. */
  nodata?: number;
  dataType: string;
  /** Ground metres per pixel at the raster's centre (mean of x and y). */
  gsd: number;
  /** EPSG:3857 extent GDAL's warper suggests for the whole raster. */
  mercatorExtent: Bounds;
  /** EPSG:3857 metres per pixel GDAL's warper suggests (keeps the source's detail). */
  mercatorResolution: number;
  /** Multiply colour values by this to reach 0..255 (16-bit or float imagery beyond 0..255). */
  scaleToByte?: { max: number };
}

const WEB_MERCATOR = gdal.SpatialReference.fromEPSG(3857);

const GMF_PER_DATASET = 0x02;

const TYPE_RANGES: Record<string, [number, number]> = {
  Byte: [0, 255],
  Int8: [-128, 127],
  UInt16: [0, 65535],
  Int16: [-32768, 32767],
  UInt32: [0, 4294967295],
  Int32: [-2147483648, 2147483647],
};

/** `path: message`, in one line whatever the path or GDAL's message holds. */
function invalid(path: string, message: string): never {
  throw new NadirError('INVALID_SOURCE', oneLine(`${path}: ${message}`));
}

/** A nodata value outside the band type's range (Pix4D's -10000 on Byte) marks nothing. */
function usableNodata(band: gdal.RasterBand): number | undefined {
  const nodata = band.noDataValue;
  if (nodata === null || nodata === undefined || Number.isNaN(nodata)) return nodata === null ? undefined : nodata;
  const range = TYPE_RANGES[band.dataType ?? ''];
  if (range && (nodata < range[0] || nodata > range[1] || !Number.isInteger(nodata))) return undefined;
  // Pixels are read back as exact float32 values; compare them with the float32 nodata.
  return band.dataType === 'Float32' ? Math.fround(nodata) : nodata;
}

type GeoTransform = [number, number, number, number, number, number];

/**
 * Ground metres per pixel at the raster's centre, from the EPSG:3857 resolution GDAL's warper
 * suggests (it keeps the source's pixel count along the diagonal) and Mercator's scale there.
 * Going through the warper rather than an OSR transform sidesteps axis order: GDAL 3 reads
 * EPSG:4326 as lat/lon, and a dataset's SRS handed to JS loses GeoTIFF's lon/lat mapping.
 */
function groundGsd(mercatorExtent: Bounds, mercatorResolution: number): number {
  const [, lat] = mercatorToLonLat(0, (mercatorExtent.minY + mercatorExtent.maxY) / 2);
  return mercatorResolution * groundScale(lat);
}

async function colourScale(ds: gdal.Dataset, bands: number[], dataType: string): Promise<{ max: number } | undefined> {
  if (dataType === 'Byte') return undefined;
  let max = 0;
  for (const n of bands) {
    const stats = await ds.bands.get(n).computeStatisticsAsync(true);
    max = Math.max(max, stats.max);
  }
  if (max <= 255) return undefined; // float RGB already holding 0..255 (OpenDroneMap does this)
  // 12-bit sensors store 0..4095 in UInt16; otherwise stretch the observed range.
  return { max: Math.max(max, 4095) };
}

export async function inspectSource(type: ContentType, path: string): Promise<SourceRaster> {
  try {
    await access(path);
  } catch {
    invalid(path, 'file not found');
  }
  let ds: gdal.Dataset;
  try {
    ds = await gdal.openAsync(path);
  } catch (error) {
    invalid(path, `not a raster GDAL can read (${(error as Error).message})`);
  }
  try {
    const bandCount = ds.bands.count();
    const { x: width, y: height } = ds.rasterSize;
    if (bandCount === 0 || width === 0 || height === 0) invalid(path, 'not a raster (no bands)');
    if (!ds.srs) invalid(path, 'has no coordinate reference system (CRS); assign one with gdal_edit.py -a_srs');
    const gt = ds.geoTransform;
    if (!gt || (gt[0] === 0 && gt[1] === 1 && gt[3] === 0 && gt[5] === 1)) invalid(path, 'is not georeferenced');

    const all = Array.from({ length: bandCount }, (_, i) => i + 1);
    const alphaBand = all.find((n) => ds.bands.get(n).colorInterpretation === 'Alpha');
    const data = all.filter((n) => n !== alphaBand);
    const kind = type === 'DetailDsm' ? 'elevation' : 'rgb';
    if (kind === 'elevation' && bandCount !== 1) {
      invalid(path, `a DetailDsm must have exactly one band (elevation), this has ${bandCount}`);
    }
    if (kind === 'rgb' && data.length < 3) {
      invalid(path, `${type} needs at least 3 colour bands (RGB), this has ${data.length}`);
    }
    const bands = kind === 'rgb' ? pickRgb(ds, data) : [1];
    const first = ds.bands.get(bands[0] as number);
    const dataType = first.dataType ?? 'Unknown';
    if (kind === 'rgb' && !(dataType in TYPE_RANGES) && !dataType.startsWith('Float')) {
      invalid(path, `unsupported data type ${dataType} for imagery`);
    }
    const suggested = gdal.suggestedWarpOutput({
      src: ds,
      s_srs: ds.srs as gdal.SpatialReference,
      t_srs: WEB_MERCATOR,
    });
    const sgt = suggested.geoTransform as GeoTransform;
    const mercatorExtent = {
      minX: sgt[0],
      maxY: sgt[3],
      maxX: sgt[0] + suggested.rasterSize.x * sgt[1],
      minY: sgt[3] + suggested.rasterSize.y * sgt[5],
    };
    return {
      type,
      path,
      kind,
      width,
      height,
      bands,
      alphaBand,
      hasInternalMask: first.getMaskFlags() === GMF_PER_DATASET,
      nodata: usableNodata(first),
      dataType,
      gsd: groundGsd(mercatorExtent, sgt[1]),
      mercatorExtent,
      mercatorResolution: sgt[1],
      scaleToByte: kind === 'rgb' ? await colourScale(ds, bands, dataType) : undefined,
    };
  } catch (error) {
    if (error instanceof NadirError) throw error;
    // GDAL's own words (a truncated file: "IReadBlock failed ... TIFFReadEncodedStrip() failed").
    invalid(path, `cannot be read: ${(error as Error).message}`);
  } finally {
    ds.close();
  }
}

/** Red, green, blue by colour interpretation when declared, else the first three bands. */
function pickRgb(ds: gdal.Dataset, data: number[]): number[] {
  const byInterp = (name: string) => data.find((n) => ds.bands.get(n).colorInterpretation === name);
  const rgb = [byInterp('Red'), byInterp('Green'), byInterp('Blue')];
  return rgb.every((n) => n !== undefined) ? (rgb as number[]) : data.slice(0, 3);
}
