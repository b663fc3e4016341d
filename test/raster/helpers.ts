import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Asset, Survey } from '../../src/catalogue/survey.js';
import type { Aoi } from '../../src/geo/aoi.js';
import { LocalStorage } from '../../src/storage/local-storage.js';
import { REALDATA, run, servicesFor, type tempDir, writeManifest } from '../support/fixtures.js';
import type { Raster } from '../support/pixels.js';

export type TempDir = Awaited<ReturnType<typeof tempDir>>;

/** Ingests real rasters with the real pipeline; `assets` maps content type to a REALDATA path. */
export async function ingestRealSurvey(
  dir: string,
  name: string,
  captureDate: string,
  assets: Record<string, string>,
): Promise<Survey> {
  const services = await servicesFor(join(dir, 'data'));
  try {
    const paths = Object.fromEntries(Object.entries(assets).map(([type, path]) => [type, join(REALDATA, path)]));
    return await services.ingestor.ingestManifestFile(await writeManifest(dir, name, { captureDate, assets: paths }));
  } finally {
    await services.close();
  }
}

/** The survey storage of a test's data folder (`<dir>/data`), where ingestRealSurvey puts the COGs. */
export function storageIn(dir: () => TempDir): Pick<LocalStorage, 'gdalPath' | 'ping'> {
  const storage = () => new LocalStorage(join(dir().path, 'data'));
  return { gdalPath: (location) => storage().gdalPath(location), ping: () => storage().ping() };
}

/** The local path of an asset's COG ingested under `dir`. */
export function cogPath(asset: Asset, dir: TempDir): string {
  return new LocalStorage(join(dir.path, 'data')).pathOf(asset.uri);
}

/**
 * The AOI square in EPSG:3857, written out from the spherical Mercator formulas and the
 * decisions.md rule (side 2 x radius ground metres = 2 x radius / cos(lat) Mercator metres),
 * independently of src/geo.
 */
export function expectedSquare(aoi: Aoi): { minX: number; minY: number; maxX: number; maxY: number } {
  const R = 6378137;
  const x = (R * aoi.lon * Math.PI) / 180;
  const y = R * Math.log(Math.tan(Math.PI / 4 + (aoi.lat * Math.PI) / 360));
  const half = aoi.radius / Math.cos((aoi.lat * Math.PI) / 180);
  return { minX: x - half, minY: y - half, maxX: x + half, maxY: y + half };
}

/** `gdalwarp` from the same COG onto the expected grid: what every rendered pixel is compared with. */
export async function gdalwarpAoi(
  cog: string,
  kind: Asset['kind'],
  aoi: Aoi,
  size: number,
  out: string,
  extra: string[] = [],
) {
  const b = expectedSquare(aoi);
  const args = ['-q', '-overwrite', '-t_srs', 'EPSG:3857', '-te', `${b.minX}`, `${b.minY}`, `${b.maxX}`, `${b.maxY}`];
  args.push('-ts', `${size}`, `${size}`, '-r', 'bilinear');
  if (kind === 'rgb') args.push('-ot', 'Byte', '-dstalpha');
  else args.push('-ot', 'Float32', '-dstnodata', '-9999');
  await run('gdalwarp', [...args, ...extra, cog, out]);
}

export async function saveBody(dir: string, name: string, body: Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, body);
  return path;
}

export interface Difference {
  /** Pixels valid in both. */
  both: number;
  onlyOurs: number;
  onlyReference: number;
  maxError: number;
  meanError: number;
  /** Fraction of compared values off by more than `bigError`. */
  bigFraction: number;
}

/** Per-value comparison of the bands both rasters have, over the pixels valid in both. */
export function difference(ours: Raster, ref: Raster, bandCount: number, bigError = 0): Difference {
  assert.equal(ours.width, ref.width);
  assert.equal(ours.height, ref.height);
  let both = 0;
  let onlyOurs = 0;
  let onlyReference = 0;
  let maxError = 0;
  let sum = 0;
  let big = 0;
  for (let i = 0; i < ours.mask.length; i++) {
    const a = ours.mask[i] !== 0;
    const b = ref.mask[i] !== 0;
    if (a && !b) onlyOurs++;
    if (b && !a) onlyReference++;
    if (!(a && b)) continue;
    both++;
    for (let k = 0; k < bandCount; k++) {
      const e = Math.abs((ours.bands[k]?.[i] as number) - (ref.bands[k]?.[i] as number));
      sum += e;
      if (e > maxError) maxError = e;
      if (e > bigError) big++;
    }
  }
  return {
    both,
    onlyOurs,
    onlyReference,
    maxError,
    meanError: sum / Math.max(1, both * bandCount),
    bigFraction: big / Math.max(1, both * bandCount),
  };
}

/** The fraction of pixels that are valid (mask non-zero) in a column range. */
export function validFraction(raster: Raster, fromColumn: number, toColumn: number): number {
  let valid = 0;
  let total = 0;
  for (let row = 0; row < raster.height; row++) {
    for (let column = fromColumn; column < toColumn; column++) {
      total++;
      if (raster.mask[row * raster.width + column] !== 0) valid++;
    }
  }
  return valid / total;
}

/** Asserts a world file's six numbers are the GeoTIFF's geotransform moved to the upper-left pixel centre. */
export function assertWorldFileMatches(text: string, geoTransform: readonly number[]): void {
  const lines = text.trimEnd().split('\n');
  assert.equal(lines.length, 6, 'six lines');
  const [a, d, b, e, c, f] = lines.map(Number) as number[];
  const [x0, w, r1, y0, r2, h] = geoTransform as number[];
  const pixel = w as number;
  const close = (actual: number | undefined, expected: number, what: string) =>
    assert.ok(Math.abs((actual as number) - expected) <= pixel * 1e-6, `${what}: ${actual} vs ${expected}`);
  close(a, w as number, 'pixel width');
  close(d, r2 as number, 'rotation');
  close(b, r1 as number, 'rotation');
  close(e, h as number, 'negative pixel height');
  close(c, (x0 as number) + pixel / 2, 'x of the upper-left pixel centre');
  close(f, (y0 as number) + (h as number) / 2, 'y of the upper-left pixel centre');
}
