/**
 * The client and nadir-client against a real `nadir serve` over the demo town: the two-step flow
 * billed once for a whole multi-type download, what lands on disk (GDAL's view of it), and a
 * download killed midway and resumed without a second transaction.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MemoryTokenStore, NadirClient, nativeImageSize, planDownload } from '@nadir/client';
import { downloadImages, FileTokenStore } from '@nadir/client/node';
import { DEMO_LANDMARKS } from '@nadir/demo-town';
import gdal from 'gdal-async';
import { gdalinfo } from '../support/fixtures.js';
import { readRaster } from '../support/pixels.js';
import { type DemoServer, NADIR_CLIENT, nadirClient, startDemoServer } from './demo-server.js';

const STORE = DEMO_LANDMARKS.find((l) => l.id === 'red-roof-store') as (typeof DEMO_LANDMARKS)[number];
const AOI = { point: { lon: STORE.lon, lat: STORE.lat }, radius: 40 };
const TYPES = ['TrueOrtho', 'DetailDsm', 'Vert'] as const;

describe('downloads from a real nadir serve', () => {
  let demo: DemoServer;
  before(async () => {
    demo = await startDemoServer();
  });
  after(() => demo?.close());

  test('the two-step flow: every survey and type at its native size, one transaction for all of it', async () => {
    const { name, apiKey } = await demo.account('client-flow');
    const client = new NadirClient({ baseUrl: demo.url, apiKey, tokenStore: new MemoryTokenStore() });
    const surveys = [];
    for await (const survey of client.surveys({ aoi: AOI, resources: [...TYPES], limit: 1 })) surveys.push(survey);
    assert.deepEqual(
      surveys.map((s) => s.captureDate),
      ['2025-10-20', '2025-04-02', '2024-03-14'],
      'three one-survey pages, newest first',
    );
    const plan = planDownload(surveys, [...TYPES], 'tif', AOI);
    assert.equal(plan.images.length, 9);
    const dir = join(demo.scratch, 'flow');
    const outcomes = await downloadImages(client, AOI, plan.images, dir, { concurrency: 3 });
    assert.deepEqual([...outcomes.values()].filter((o) => o === 'downloaded').length, 9);
    for (const image of plan.images) {
      const info = await gdalinfo(join(dir, image.fileName));
      const gsd = surveys.find((s) => s.id === image.surveyId)?.pixelSizes?.[image.type] as number;
      assert.deepEqual(
        info.size,
        [nativeImageSize(AOI.radius, gsd).size, nativeImageSize(AOI.radius, gsd).size],
        image.fileName,
      );
      assert.match(info.coordinateSystem?.wkt ?? '', /Pseudo-Mercator/);
    }
    // The store (built between the 2024 and the 2025 surveys) is red at the centre of the 2025 orthos only.
    for (const image of plan.images.filter((i) => i.type === 'TrueOrtho')) {
      const raster = await readRaster(join(dir, image.fileName));
      const centre = Math.floor(raster.height / 2) * raster.width + Math.floor(raster.width / 2);
      const [r, g, b] = raster.bands.map((band) => band[centre] as number);
      const red = (r as number) > 150 && (g as number) < 90 && (b as number) < 90;
      assert.equal(red, image.captureDate !== '2024-03-14', `${image.fileName}: centre ${r},${g},${b}`);
    }
    assert.equal(await demo.transactions(name), 1, 'nine images, one coverage token, one transaction');
  });

  test('nadir-client download: named files, a killed run resumed with the same token, still one transaction', async () => {
    const { name, apiKey } = await demo.account('client-cli');
    const env = { NADIR_URL: demo.url, NADIR_API_KEY: apiKey };
    const out = join(demo.scratch, 'cli');
    const args = ['download', '--point', `${AOI.point.lon},${AOI.point.lat}`, '--radius', String(AOI.radius)];
    args.push('--types', 'TrueOrtho,DetailDsm', '--format', 'tif', '--out', out, '--progress');
    // Killed as soon as it has its token and has started writing.
    const child = spawn(process.execPath, [NADIR_CLIENT, ...args], {
      // The folder's token file only, as nadirClient runs it: no user token file in the home.
      env: { ...process.env, NADIR_TOKEN_FILE: '', ...env },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    for (let tries = 0; tries < 400; tries++) {
      const names = await readdir(out).catch(() => [] as string[]);
      if (names.includes('.nadir-tokens.json') && names.some((n) => n.endsWith('.part') || n.endsWith('.tif'))) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill('SIGKILL');
    await exited;
    const token = (await new FileTokenStore(join(out, '.nadir-tokens.json')).get(await firstScope(out))) as {
      token: string;
    };
    assert.ok(token.token.startsWith('t1.'));

    const resumed = await nadirClient(env, ...args, '--json');
    assert.equal(resumed.code, 0, resumed.stderr);
    const report = JSON.parse(resumed.stdout) as { files: { file: string; outcome: string; size: number }[] };
    const names = (await readdir(out)).filter((n) => !n.startsWith('.')).sort();
    assert.deepEqual(names, report.files.map((f) => f.file).sort());
    assert.equal(names.length, 6);
    for (const file of names)
      assert.match(file, /^\d{4}-\d{2}-\d{2}_[0-9a-f-]{36}_(TrueOrtho|DetailDsm)_-85\.\d+,29\.\d+_\d+m_\d+px\.tif$/);
    assert.ok(names.every((n) => !n.endsWith('.part')));
    for (const file of report.files)
      assert.deepEqual((await gdalinfo(join(out, file.file))).size, [file.size, file.size]);
    const again = (await new FileTokenStore(join(out, '.nadir-tokens.json')).get(await firstScope(out))) as {
      token: string;
    };
    assert.equal(again.token, token.token, 'the resumed run used the token the killed one kept');
    assert.equal(await demo.transactions(name), 1);

    // A third run finds everything whole and fetches nothing.
    const third = await nadirClient(env, ...args.filter((a) => a !== '--progress'), '--json');
    assert.ok((JSON.parse(third.stdout).files as { outcome: string }[]).every((f) => f.outcome === 'skipped'));
  });

  test('nadir-client download --split: an area of 2 x 2 AOIs, one transaction each, mosaicked by a VRT GDAL opens', async () => {
    const { name, apiKey } = await demo.account('client-split');
    const env = { NADIR_URL: demo.url, NADIR_API_KEY: apiKey };
    const area = join(demo.scratch, 'area.geojson');
    const ring = [
      [STORE.lon - 0.0015, STORE.lat - 0.0012],
      [STORE.lon + 0.0015, STORE.lat - 0.0012],
      [STORE.lon + 0.0015, STORE.lat + 0.0011],
      [STORE.lon - 0.0015, STORE.lat - 0.0012],
    ];
    await writeFile(area, JSON.stringify({ type: 'Polygon', coordinates: [ring] }));
    const out = join(demo.scratch, 'split');
    const refused = await nadirClient(env, 'download', '--aoi', area, '--out', out);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--split fetches it as 4 areas/);
    const made = await nadirClient(
      env,
      'download',
      '--aoi',
      area,
      '--split',
      '--latest',
      '--types',
      'TrueOrtho',
      '--out',
      out,
      '--json',
    );
    assert.equal(made.code, 0, made.stderr);
    const report = JSON.parse(made.stdout) as { cells: number; mosaics: { fileName: string; cells: number }[] };
    assert.equal(report.cells, 4);
    assert.equal(report.mosaics.length, 1);
    assert.equal(report.mosaics[0]?.cells, 4);
    assert.match(
      report.mosaics[0]?.fileName ?? '',
      /^2025-10-20_d3a5f7c1-6e2b-4c89-8f14-5b0a9e2c7d03_TrueOrtho_-85\.\d+,29\.\d+_2x2cells\.vrt$/,
    );
    assert.equal(await demo.transactions(name), 4, 'one transaction per area');
    const vrt = join(out, report.mosaics[0]?.fileName as string);
    const info = await gdalinfo(vrt);
    assert.match(info.coordinateSystem?.wkt ?? '', /Pseudo-Mercator/);
    // The store's pixel in the mosaic is its red roof.
    const [originX, pixel, , originY, , negativePixel] = info.geoTransform;
    const x = (STORE.lon * Math.PI * 6378137) / 180;
    const y = 6378137 * Math.log(Math.tan(Math.PI / 4 + (STORE.lat * Math.PI) / 360));
    const dataset = await gdal.openAsync(vrt);
    const at = [Math.floor((x - originX) / pixel), Math.floor((y - originY) / negativePixel)] as const;
    const [r, g, b] = [1, 2, 3].map(
      (band) => (dataset.bands.get(band).pixels.read(at[0], at[1], 1, 1) as Uint8Array)[0] as number,
    );
    dataset.close();
    assert.ok((r as number) > 150 && (g as number) < 90 && (b as number) < 90, `store pixel ${r},${g},${b}`);
  });

  test('nadir-client coverage, and its exit codes against the real server', async () => {
    const { apiKey } = await demo.account('client-coverage');
    const point = `${AOI.point.lon},${AOI.point.lat}`;
    const listed = await nadirClient(
      { NADIR_URL: demo.url, NADIR_API_KEY: apiKey },
      'coverage',
      '--point',
      point,
      '--radius',
      '40',
      '--json',
    );
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal((JSON.parse(listed.stdout) as { total: number }).total, 3);
    const refused = await nadirClient(
      { NADIR_URL: demo.url, NADIR_API_KEY: 'nadir_wrong' },
      'coverage',
      '--point',
      point,
      '--radius',
      '40',
    );
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^nadir-client coverage: .*\(401 API_KEY_INVALID\)\n$/);
    const usage = await nadirClient(
      { NADIR_URL: demo.url, NADIR_API_KEY: apiKey },
      'coverage',
      '--point',
      point,
      '--radius',
      '400',
    );
    assert.equal(usage.code, 2);
  });
});

/** The one scope in a download folder's token file. */
async function firstScope(dir: string): Promise<string> {
  const text = await readFile(join(dir, '.nadir-tokens.json'), 'utf8');
  return Object.keys((JSON.parse(text) as { tokens: Record<string, unknown> }).tokens)[0] as string;
}
