/**
 * A drone survey (TrueOrtho and DetailDsm only, the usual OpenDroneMap output: the Wisconsin pair
 * of ../shared/realdata) as map layers (issue 34, item 4): TrueOrtho tiles against gdalwarp of
 * the original orthophoto, and DetailDsm as Terrain-RGB (decoded heights against gdalwarp of the
 * original DSM), hillshade (against gdaldem hillshade of the same heights) and colour relief.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Survey } from '../../src/catalogue/survey.js';
import { grownGrid, tileGrid } from '../../src/geo/aoi-grid.js';
import { mercatorToLonLat, type TileCoord, tileBounds, tileForMercator } from '../../src/geo/web-mercator.js';
import { terrainRgbHeight } from '../../src/height-tiles/height-styles.js';
import { rampColour } from '../../src/raster/index.js';
import { rgba } from '../gis/tile-pixels.js';
import { REALDATA, run, writeManifest } from '../support/fixtures.js';
import { readRaster } from '../support/pixels.js';
import { comparePixels } from '../support/reference.js';
import { type ApiFixture, createKey, errorBody, realdataMissing, startApi } from './helpers.js';

const ID = '7a1e0c55-4d2b-4f0e-9c1a-3b5d7e9f1a01';
const ORTHO = join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif');
const DSM = join(REALDATA, 'fieldimager-ws5/dsm.tif');

describe('a TrueOrtho and DetailDsm survey as map layers', { skip: realdataMissing }, () => {
  let api: ApiFixture;
  let key: string;
  let survey: Survey;
  let tile: TileCoord;

  before(async () => {
    api = await startApi();
    key = (await createKey(api.services, 'drone-tiles')).key;
    const manifest = await writeManifest(api.dir, ID, {
      id: ID,
      captureDate: '2024-06-01',
      firstPhotoTime: '2024-06-01T15:00:00Z',
      lastPhotoTime: '2024-06-01T16:00:00Z',
      tags: [],
      assets: { TrueOrtho: ORTHO, DetailDsm: DSM },
    });
    survey = await api.services.ingestor.ingestManifestFile(manifest);
    const dsm = survey.assets.DetailDsm;
    assert.ok(dsm && survey.assets.TrueOrtho && !survey.assets.Vert);
    const b = dsm.bounds;
    tile = tileForMercator((b.minX + b.maxX) / 2, (b.minY + b.maxY) / 2, dsm.maxZoom);
  });
  after(async () => api.close());

  const path = (layer: string, t: TileCoord, extension = 'png') => `${layer}/${t.z}/${t.x}/${t.y}.${extension}`;

  test('TrueOrtho tiles are the orthophoto as gdalwarp draws it; the survey has no Vert tile', async () => {
    const ortho = survey.assets.TrueOrtho;
    assert.ok(ortho);
    const b = ortho.bounds;
    const at = tileForMercator((b.minX + b.maxX) / 2, (b.minY + b.maxY) / 2, ortho.maxZoom);
    for (const url of [`/tiles/v3/surveys/${ID}/${path('TrueOrtho', at)}`, `/tiles/v3/${path('TrueOrtho', at)}`]) {
      const r = await api.get(`${url}?apikey=${key}`);
      assert.equal(r.status, 200, url);
      assert.equal(r.headers.get('x-survey-ids'), ID);
      const ours = join(api.dir, 'ortho.png');
      await writeFile(ours, Buffer.from(await r.arrayBuffer()));
      const box = tileBounds(at);
      const ref = join(api.dir, 'ortho-ref.tif');
      await run('gdalwarp', [
        ...[
          '-q',
          '-overwrite',
          '-t_srs',
          'EPSG:3857',
          '-te',
          `${box.minX}`,
          `${box.minY}`,
          `${box.maxX}`,
          `${box.maxY}`,
        ],
        ...['-ts', '256', '256', '-r', 'bilinear', '-ot', 'Byte', '-dstalpha', ORTHO, ref],
      ]);
      comparePixels(await readRaster(ours, [1, 2, 3]), await readRaster(ref, [1, 2, 3]), 'rgb', 0.01);
    }
    const vert = await api.get(`/tiles/v3/${path('Vert', at, 'jpg')}?apikey=${key}`);
    assert.equal(vert.status, 404);
    assert.equal((await errorBody(vert)).code, 'NO_IMAGERY');
  });

  /** gdalwarp of the original DSM onto the tile's grid grown by a pixel (258 x 258, nodata -9999). */
  async function referenceHeights(): Promise<{ heights: Float64Array; file: string }> {
    const g = grownGrid(tileGrid(tile), 1);
    const file = join(api.dir, 'dsm-ref.tif');
    const b = g.bounds;
    await run('gdalwarp', [
      ...['-q', '-overwrite', '-t_srs', 'EPSG:3857', '-te', `${b.minX}`, `${b.minY}`, `${b.maxX}`, `${b.maxY}`],
      ...['-ts', '258', '258', '-r', 'bilinear', '-ot', 'Float32', '-dstnodata', '-9999', DSM, file],
    ]);
    const raster = await readRaster(file, [1]);
    return { heights: raster.bands[0] as Float64Array, file };
  }
  const inner = (heights: Float64Array, row: number, column: number) => heights[(row + 1) * 258 + column + 1] as number;

  test('Terrain-RGB decodes to the DSM heights within 0.1 m, opaque, the ground where there is none', async () => {
    const r = await api.get(`/tiles/v3/${path('DetailDsm/terrain-rgb', tile)}?apikey=${key}`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'image/png');
    const { data } = await rgba(Buffer.from(await r.arrayBuffer()));
    const { heights } = await referenceHeights();
    let compared = 0;
    let worst = 0;
    let lowest = Number.POSITIVE_INFINITY;
    for (let row = 0; row < 256; row++) {
      for (let column = 0; column < 256; column++) {
        const at = (row * 256 + column) * 4;
        assert.equal(data[at + 3], 255, 'opaque');
        const ours = terrainRgbHeight(data[at] as number, data[at + 1] as number, data[at + 2] as number);
        const ref = inner(heights, row, column);
        if (ref === -9999) {
          lowest = Math.min(lowest, ours);
          continue;
        }
        compared++;
        worst = Math.max(worst, Math.abs(ours - ref));
      }
    }
    assert.ok(compared > 10_000, `${compared} heights compared`);
    assert.ok(worst <= 0.051, `worst height error ${worst} m`);
    if (lowest !== Number.POSITIVE_INFINITY) assert.ok(lowest > 270 && lowest < 277, `no-height pixels at ${lowest} m`);
  });

  test('hillshade is gdaldem hillshade of the same heights; relief is the ramp over min..max', async () => {
    const { heights, file } = await referenceHeights();
    const shadeFile = join(api.dir, 'shade-ref.tif');
    const [, lat] = mercatorToLonLat(
      (tileBounds(tile).minX + tileBounds(tile).maxX) / 2,
      (tileBounds(tile).minY + tileBounds(tile).maxY) / 2,
    );
    await run('gdaldem', [
      'hillshade',
      '-q',
      '-compute_edges',
      '-z',
      `${1 / Math.cos((lat * Math.PI) / 180)}`,
      file,
      shadeFile,
    ]);
    const shade = (await readRaster(shadeFile, [1])).bands[0] as Float64Array;
    const r = await api.get(`/tiles/v3/surveys/${ID}/${path('DetailDsm/hillshade', tile)}?apikey=${key}`);
    assert.equal(r.status, 200);
    const ours = (await rgba(Buffer.from(await r.arrayBuffer()))).data;
    let compared = 0;
    let off = 0;
    for (let row = 1; row < 255; row++) {
      for (let column = 1; column < 255; column++) {
        const at = (row * 256 + column) * 4;
        const ref = inner(heights, row, column);
        if (ref === -9999) {
          assert.equal(ours[at + 3], 0, 'no height: transparent');
          continue;
        }
        // Only where the whole 3 x 3 window has heights: gdaldem and nadir fill edges alike, but the test keeps to the plain case.
        let whole = true;
        for (let dy = -1; dy <= 1; dy++)
          for (let dx = -1; dx <= 1; dx++) if (inner(heights, row + dy, column + dx) === -9999) whole = false;
        if (!whole) continue;
        compared++;
        if (Math.abs((ours[at] as number) - (shade[(row + 1) * 258 + column + 1] as number)) > 2) off++;
      }
    }
    assert.ok(compared > 10_000, `${compared} shades compared`);
    assert.ok(off <= compared * 0.01, `${off} of ${compared} shades off by more than 2`);

    const relief = await api.get(`/tiles/v3/${path('DetailDsm/relief', tile)}?min=274&max=277&apikey=${key}`);
    assert.equal(relief.status, 200);
    const colours = (await rgba(Buffer.from(await relief.arrayBuffer()))).data;
    let worst = 0;
    for (let row = 0; row < 256; row += 3) {
      for (let column = 0; column < 256; column += 3) {
        const at = (row * 256 + column) * 4;
        const ref = inner(heights, row, column);
        if (ref === -9999) {
          assert.equal(colours[at + 3], 0);
          continue;
        }
        const want = rampColour((ref - 274) / 3);
        for (let k = 0; k < 3; k++)
          worst = Math.max(worst, Math.abs((colours[at + k] as number) - (want[k] as number)));
      }
    }
    assert.ok(worst <= 2, `relief colours off by up to ${worst}`);
  });

  test("TileJSON, WMTS and STAC list the survey's TrueOrtho and DetailDsm layers, and their templates draw", async () => {
    const terrain = (await (await api.get(`/tiles/v3/DetailDsm/terrain-rgb/tilejson.json?apikey=${key}`)).json()) as {
      tiles: string[];
      encoding: string;
      maxzoom: number;
    };
    assert.equal(terrain.encoding, 'mapbox');
    assert.equal(terrain.maxzoom, survey.assets.DetailDsm?.maxZoom);
    const own = (await (await api.get(`/tiles/v3/surveys/${ID}/TrueOrtho/tilejson.json?apikey=${key}`)).json()) as {
      tiles: string[];
    };
    for (const template of [terrain.tiles[0], own.tiles[0]]) {
      const url = (template as string)
        .replace('{z}', `${tile.z}`)
        .replace('{x}', `${tile.x}`)
        .replace('{y}', `${tile.y}`);
      assert.equal((await fetch(url)).status, 200, url);
    }
    const capabilities = await (await api.get(`/wmts/1.0.0/WMTSCapabilities.xml?apikey=${key}`)).text();
    const layers = [...capabilities.matchAll(/<\/ows:WGS84BoundingBox><ows:Identifier>([^<]+)</g)].map((m) => m[1]);
    assert.deepEqual(layers, ['Vert', 'TrueOrtho', 'DetailDsm-relief', 'DetailDsm-hillshade']);
    const item = (await (await api.get(`/stac/v1/collections/surveys/items/${ID}?apikey=${key}`)).json()) as {
      links: { rel: string; href: string; 'wmts:layer'?: string }[];
      assets: Record<string, { href: string }>;
    };
    assert.deepEqual(
      Object.keys(item.assets).filter((name) => name.endsWith('_tiles')),
      ['TrueOrtho_tiles', 'DetailDsm_relief_tiles', 'DetailDsm_hillshade_tiles', 'DetailDsm_terrain-rgb_tiles'],
    );
    assert.equal(item.links.find((link) => link.rel === 'wmts')?.['wmts:layer'], 'TrueOrtho');
    assert.match(item.links.find((link) => link.rel === 'xyz')?.href ?? '', /\/surveys\/[^/]+\/TrueOrtho\/\{z\}/);
  });

  test('refusals, 304 and the absent layers', async () => {
    const cases: [string, number, string][] = [
      [`/tiles/v3/${path('DetailDsm/contours', tile)}`, 400, 'INVALID_PARAMETER'],
      [`/tiles/v3/${path('DetailDsm/relief', tile, 'jpg')}`, 400, 'INVALID_PARAMETER'],
      [`/tiles/v3/${path('DetailDsm/relief', tile)}?min=270`, 400, 'INVALID_PARAMETER'],
      [`/tiles/v3/${path('DetailDsm/relief', tile)}?min=280&max=270`, 400, 'INVALID_PARAMETER'],
      [`/tiles/v3/${path('DetailDsm/hillshade', tile)}?min=270&max=280`, 400, 'INVALID_PARAMETER'],
      [`/tiles/v3/${path('DetailDsm/relief', { z: 19, x: 0, y: 0 })}`, 404, 'NO_IMAGERY'],
      [`/tiles/v3/surveys/nope/${path('DetailDsm/relief', tile)}`, 404, 'SURVEY_NOT_FOUND'],
    ];
    for (const [url, status, code] of cases) {
      const r = await api.get(`${url}${url.includes('?') ? '&' : '?'}apikey=${key}`);
      assert.equal(r.status, status, url);
      assert.equal((await errorBody(r)).code, code, url);
    }
    const unauthorised = await api.get(`/tiles/v3/${path('DetailDsm/relief', tile)}`);
    assert.equal(unauthorised.status, 401);
    const first = await api.get(`/tiles/v3/${path('DetailDsm/relief', tile)}?apikey=${key}`);
    const etag = first.headers.get('etag');
    assert.ok(etag);
    const again = await api.get(`/tiles/v3/${path('DetailDsm/relief', tile)}?apikey=${key}`, {
      headers: { 'if-none-match': etag },
    });
    assert.equal(again.status, 304);
  });
});
