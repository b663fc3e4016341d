/**
 * Tiles of real rasters in four UTM zones, both hemispheres and NAD83, each compared with
 * gdalwarp of the ORIGINAL file onto the tile's EPSG:3857 bounds: the whole chain (ingest grid,
 * overviews, tile addressing, compositing, encoding) against GDAL, at native zoom and one zoom out.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ORIGIN_SHIFT, type TileCoord, tileBounds } from '../../src/geo/web-mercator.js';
import { REALDATA, run } from '../support/fixtures.js';
import { readRaster } from '../support/pixels.js';
import { comparePixels } from '../support/reference.js';
import { type ApiFixture, createKey, realdataMissing, startApi } from './helpers.js';
import { ingestRealdataSurvey } from './tiles-fixture.js';

const FILES = [
  ['rio-tiler/201404_13SED190110_201404_0x1500m_CL_1.tif', '0f4b1f8e-2c55-4b61-8d9e-4e6a0c1d2b01'],
  ['rio-tiler/cog_rgb.tif', '0f4b1f8e-2c55-4b61-8d9e-4e6a0c1d2b02'],
  ['rio-tiler/pix4d_alpha_nodata.tif', '0f4b1f8e-2c55-4b61-8d9e-4e6a0c1d2b03'],
  ['webodm/orthophoto.tif', '0f4b1f8e-2c55-4b61-8d9e-4e6a0c1d2b04'],
] as const;

function tileAt(x: number, y: number, z: number): TileCoord {
  const size = (2 * ORIGIN_SHIFT) / 2 ** z;
  return { z, x: Math.floor((x + ORIGIN_SHIFT) / size), y: Math.floor((ORIGIN_SHIFT - y) / size) };
}

describe('tiles of real rasters match gdalwarp of the originals', { skip: realdataMissing }, () => {
  let api: ApiFixture;
  let key: string;

  before(async () => {
    api = await startApi();
    key = (await createKey(api.services, 'realdata-tiles')).key;
  });
  after(async () => api.close());

  for (const [file, id] of FILES) {
    test(file, async () => {
      const survey = await ingestRealdataSurvey(api.services, api.dir, file, { id, captureDate: '2024-05-01' });
      const asset = survey.assets.Vert;
      assert.ok(asset);
      const centre = { x: (asset.bounds.minX + asset.bounds.maxX) / 2, y: (asset.bounds.minY + asset.bounds.maxY) / 2 };
      for (const [z, resampling] of [
        [asset.maxZoom, 'bilinear'],
        [asset.maxZoom - 1, 'average'],
      ] as const) {
        const tile = tileAt(centre.x, centre.y, z);
        const r = await api.get(`/tiles/v3/surveys/${id}/Vert/${z}/${tile.x}/${tile.y}.png?apikey=${key}`);
        assert.equal(r.status, 200, `z${z}`);
        const ours = join(api.dir, `${id}-${z}.png`);
        await writeFile(ours, Buffer.from(await r.arrayBuffer()));
        const b = tileBounds(tile);
        const ref = join(api.dir, `${id}-${z}-ref.tif`);
        await run('gdalwarp', [
          ...['-q', '-overwrite', '-t_srs', 'EPSG:3857', '-te', `${b.minX}`, `${b.minY}`, `${b.maxX}`, `${b.maxY}`],
          ...['-ts', '256', '256', '-r', resampling, '-ot', 'Byte', '-dstalpha', join(REALDATA, file), ref],
        ]);
        const maskTolerance = z === asset.maxZoom ? 0.005 : 0.03;
        comparePixels(await readRaster(ours, [1, 2, 3]), await readRaster(ref, [1, 2, 3]), 'rgb', maskTolerance);
      }
    });
  }
});
