import assert from 'node:assert/strict';
import type { Asset } from '../../src/catalogue/survey.js';
import { run } from './fixtures.js';
import type { Raster } from './pixels.js';

/**
 * `gdalwarp` onto exactly the COG's grid: the reference every pixel is compared with. Several
 * sources are mosaicked by gdalwarp itself (later files over earlier ones), in any CRSs.
 */
export async function gdalwarpReference(source: string | string[], asset: Asset, out: string): Promise<void> {
  const { bounds: b } = asset;
  const args = ['-q', '-overwrite', '-t_srs', 'EPSG:3857', '-te', `${b.minX}`, `${b.minY}`, `${b.maxX}`, `${b.maxY}`];
  args.push('-ts', `${asset.width}`, `${asset.height}`, '-r', 'bilinear');
  if (asset.kind === 'rgb') args.push('-ot', 'Byte', '-dstalpha');
  else args.push('-ot', 'Float32', '-dstnodata', '-9999');
  await run('gdalwarp', [...args, ...(typeof source === 'string' ? [source] : source), out]);
}

/**
 * JPEG at quality 90 after the same bilinear warp: the mean error of 8-bit channels stays within
 * a few levels and almost every pixel within 24. Heights are lossless (DEFLATE): same numbers.
 */
/**
 * `maskTolerance`: the share of pixels whose validity may differ. Overviews need more than full
 * resolution: GDAL decides a shrunk mask pixel differently from gdalwarp's alpha, along a one-pixel
 * border of the data, which on a small raster is a few percent of it.
 */
export function comparePixels(ours: Raster, ref: Raster, kind: string, maskTolerance = 0.005): void {
  let both = 0;
  let onlyRef = 0;
  let onlyOurs = 0;
  let droppedBlack = 0;
  let sumError = 0;
  let bigErrors = 0;
  let maxHeightError = 0;
  for (let i = 0; i < ours.mask.length; i++) {
    const a = ours.mask[i] !== 0;
    const b = ref.mask[i] !== 0;
    if (a && b) {
      both++;
      for (let k = 0; k < ours.bands.length; k++) {
        const e = Math.abs((ours.bands[k]?.[i] as number) - (ref.bands[k]?.[i] as number));
        if (kind === 'rgb') {
          sumError += e;
          if (e > 24) bigErrors++;
        } else maxHeightError = Math.max(maxHeightError, e);
      }
    } else if (b) {
      onlyRef++;
      // A black collar (OpenDroneMap) is data to gdalwarp but not to nadir.
      if (ref.bands.every((band) => (band[i] as number) <= 8)) droppedBlack++;
    } else if (a) onlyOurs++;
  }
  assert.ok(both > 1000, 'the rasters overlap');
  assert.ok(onlyOurs <= both * maskTolerance, `nadir invents no data: ${onlyOurs} pixels valid only in nadir's COG`);
  assert.ok(onlyRef - droppedBlack <= both * maskTolerance, `nadir drops no data: ${onlyRef - droppedBlack} pixels`);
  if (kind === 'rgb') {
    const mean = sumError / (both * ours.bands.length);
    assert.ok(mean < 5, `mean channel error ${mean.toFixed(2)}`);
    assert.ok(bigErrors < both * ours.bands.length * 0.01, `${bigErrors} channel values off by > 24`);
  } else {
    assert.ok(maxHeightError < 1e-3, `max height difference ${maxHeightError} m`);
  }
}
