/**
 * Item assets GDAL opens as they are (issue 34, items 2 and 3): a STAC search that carries a
 * transaction token lists, per survey, the token's area as a GeoTIFF URL with the proj:* of its
 * own grid; GDAL's STACIT driver builds the mosaic from the search URL alone and reads the same
 * pixels as the download, through /vsicurl/ range reads (the imagery endpoint honours Range over
 * one render), and the whole of it is one transaction.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { aoiGrid } from '../../src/geo/aoi-grid.js';
import { type DemoServer, startDemoServer } from '../client/demo-server.js';
import { readRaster } from '../support/pixels.js';
import { NEW } from './demo-server.js';

const run = promisify(execFile);
const POINT = { lon: -85.4168, lat: 29.9463 };
const RADIUS = 40;

describe('STACIT and /vsicurl/ on the assets of a search with a transaction token', { timeout: 120_000 }, () => {
  let demo: DemoServer;
  let key: string;
  let token: string;
  const name = 'stacit';

  before(async () => {
    demo = await startDemoServer();
    key = (await demo.account(name)).apiKey;
    const coverage = await fetch(
      `${demo.url}/staticmap/v2/coverage.json?point=${POINT.lon},${POINT.lat}&radius=${RADIUS}&resources=TrueOrtho&apikey=${key}`,
    );
    token = ((await coverage.json()) as { transactionToken: string }).transactionToken;
  });
  after(async () => demo?.close());

  const searchUrl = (extra = '') =>
    `${demo.url}/stac/v1/search?ids=${NEW}&transactionToken=${encodeURIComponent(token)}&apikey=${key}${extra}`;

  test('STACIT opens the search as the area at native resolution, pixels equal to the download', async () => {
    const page = (await (await fetch(searchUrl())).json()) as {
      features: { assets: Record<string, { href: string; 'proj:shape': [number, number] }> }[];
    };
    const asset = page.features[0]?.assets.TrueOrtho;
    assert.ok(asset, 'the item has the area as its TrueOrtho asset');
    const [size] = asset['proj:shape'];
    const dataset = `STACIT:"${searchUrl()}":asset=TrueOrtho`;
    const info = JSON.parse((await run('gdalinfo', ['-json', dataset])).stdout) as {
      size: [number, number];
      geoTransform: number[];
    };
    assert.deepEqual(info.size, [size, size]);
    const grid = aoiGrid({ ...POINT, radius: RADIUS }, size);
    for (const [i, value] of info.geoTransform.entries()) {
      assert.ok(Math.abs(value - (grid.geoTransform[i] as number)) < 1e-6, `geotransform ${i}: ${value}`);
    }
    const dir = demo.scratch;
    const mosaic = join(dir, 'stacit.tif');
    await run('gdal_translate', ['-q', dataset, mosaic]);
    const download = join(dir, 'download.tif');
    await writeFile(download, Buffer.from(await (await fetch(asset.href)).arrayBuffer()));
    const [a, b] = [await readRaster(mosaic), await readRaster(download)];
    assert.equal(a.bands.length, b.bands.length);
    for (const [i, band] of a.bands.entries()) assert.deepEqual(band, b.bands[i], `band ${i + 1}`);
    // GDAL read it through /vsicurl/ as well: the asset opens as it is.
    const direct = JSON.parse((await run('gdalinfo', ['-json', `/vsicurl/${asset.href}`])).stdout) as {
      driverShortName: string;
      size: [number, number];
    };
    assert.deepEqual([direct.driverShortName, direct.size], ['GTiff', [size, size]]);
  });

  test('Range over the rendered file: 206 with Content-Range, 416 past the end, several ranges the whole', async () => {
    const page = (await (await fetch(searchUrl())).json()) as {
      features: { assets: Record<string, { href: string }> }[];
    };
    const href = page.features[0]?.assets.TrueOrtho?.href as string;
    const whole = Buffer.from(await (await fetch(href)).arrayBuffer());
    const part = await fetch(href, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${whole.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), whole.subarray(100, 200));
    const tail = await fetch(href, { headers: { range: 'bytes=-10' } });
    assert.deepEqual(Buffer.from(await tail.arrayBuffer()), whole.subarray(whole.length - 10));
    const past = await fetch(href, { headers: { range: `bytes=${whole.length}-` } });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), `bytes */${whole.length}`);
    assert.equal(((await past.json()) as { code: string }).code, 'RANGE_NOT_SATISFIABLE');
    const several = await fetch(href, { headers: { range: 'bytes=0-1,5-6' } });
    assert.equal(several.status, 200);
    assert.equal((await several.arrayBuffer()).byteLength, whole.length);
    assert.equal(part.headers.get('accept-ranges'), 'bytes');
  });

  test('one transaction for all of it; a bad token is refused at the search', async () => {
    assert.equal(await demo.transactions(name), 1);
    const bad = await fetch(`${demo.url}/stac/v1/search?transactionToken=nope&apikey=${key}`);
    assert.equal(bad.status, 403);
    assert.equal(((await bad.json()) as { code: string }).code, 'TRANSACTION_TOKEN_INVALID');
  });
});
