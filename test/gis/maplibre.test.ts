/**
 * MapLibre GL in headless Chromium adds nadir from its TileJSON URL alone (issue 21) and draws the
 * demo town, served by a real `nadir serve`. MapLibre comes from node_modules (no CDN, no network),
 * from a page server of its own: nadir is another origin, as for any web map (CORS).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BrowserContext, chromium } from 'playwright-core';
import sharp from 'sharp';
import { realClockEnvironment } from '../support/clock.js';
import { PROJECT_ROOT } from '../support/fixtures.js';
import { type GisServer, startGisServer } from './demo-server.js';

const CHROMIUM = '/usr/bin/chromium';
const MAPLIBRE = join(PROJECT_ROOT, 'node_modules/maplibre-gl/dist');
const FILES: Record<string, [string, string]> = {
  '/': [join(import.meta.dirname, 'maplibre-page/index.html'), 'text/html; charset=utf-8'],
  '/maplibre-gl.mjs': [join(MAPLIBRE, 'maplibre-gl.mjs'), 'text/javascript'],
  '/maplibre-gl-shared.mjs': [join(MAPLIBRE, 'maplibre-gl-shared.mjs'), 'text/javascript'],
  '/maplibre-gl-worker.mjs': [join(MAPLIBRE, 'maplibre-gl-worker.mjs'), 'text/javascript'],
  '/maplibre-gl.css': [join(MAPLIBRE, 'maplibre-gl.css'), 'text/css'],
};

function pageServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const file = FILES[(request.url ?? '/').split('?', 1)[0] as string];
    if (!file) {
      response.writeHead(404).end();
      return;
    }
    readFile(file[0]).then(
      (body) => response.writeHead(200, { 'content-type': file[1] }).end(body),
      () => response.writeHead(500).end(),
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` }),
    ),
  );
}

describe('MapLibre GL adds nadir from a TileJSON URL', () => {
  let gis: GisServer;
  let pages: { server: Server; url: string };
  let profile: string;
  let browser: BrowserContext;

  before(async () => {
    gis = await startGisServer();
    pages = await pageServer();
    profile = await mkdtemp(join(tmpdir(), 'nadir-maplibre-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        // WebGL without a GPU: SwiftShader, Chromium's software renderer.
        '--use-angle=swiftshader',
        '--enable-unsafe-swiftshader',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 800, height: 600 },
      env: realClockEnvironment(),
    });
  });
  after(async () => {
    await browser?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
    pages?.server.close();
    await gis?.server.stop();
  });

  test('the demo town is drawn from the TileJSON alone, with no console error', async () => {
    const tileJsonUrl = `${gis.base}/tiles/v3/Vert/tilejson.json?apikey=${gis.key}`;
    const tileJson = (await (await fetch(tileJsonUrl)).json()) as { center: number[] };
    const [lon, lat] = tileJson.center as [number, number];
    const page = await browser.newPage();
    const problems: string[] = [];
    const tiles: { url: string; status: number }[] = [];
    const outside: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') {
        problems.push(`${message.text()} (${message.location().url})`);
      }
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('response', (response) => {
      const url = response.url();
      if (url.includes('/tiles/v3/Vert/') && !url.includes('tilejson')) tiles.push({ url, status: response.status() });
    });
    page.on('request', (request) => {
      const url = request.url();
      if (
        !url.startsWith(pages.url) &&
        !url.startsWith(gis.base) &&
        !url.startsWith('blob:') &&
        !url.startsWith('data:')
      ) {
        outside.push(url);
      }
    });
    const query = new URLSearchParams({ tilejson: tileJsonUrl, lon: `${lon}`, lat: `${lat}`, zoom: '17' });
    await page.goto(`${pages.url}/?${query}`);
    const deadline = Date.now() + 60_000;
    while ((await page.evaluate('document.body.dataset.idle')) !== 'yes') {
      assert.ok(Date.now() < deadline, `the map never became idle: ${problems.join('; ')}`);
      await sleep(100);
    }
    assert.deepEqual(problems, [], 'no console error or warning');
    assert.deepEqual(outside, [], 'nothing fetched from anywhere else');
    assert.ok(tiles.length >= 4, `tiles were asked for: ${tiles.length}`);
    for (const tile of tiles) {
      assert.equal(tile.status, 200, tile.url);
      assert.equal(new URL(tile.url).searchParams.get('apikey'), gis.key, 'the template carried the key');
      // MapLibre's zoom counts 512 px tiles: its zoom 17 asks for 256 px tiles of zoom 18.
      assert.match(tile.url, /\/tiles\/v3\/Vert\/18\/\d+\/\d+\.img\?/);
    }
    const attribution = (await page.locator('.maplibregl-ctrl-attrib').textContent()) ?? '';
    assert.match(attribution, /nadir/, 'the TileJSON attribution is shown');

    // The canvas shows imagery: the middle of the map (the town) is not the white page behind it.
    const shot = await page.locator('canvas').screenshot();
    const { data, info } = await sharp(shot).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    let coloured = 0;
    let middle = 0;
    for (let y = info.height / 4; y < (info.height * 3) / 4; y++) {
      for (let x = info.width / 4; x < (info.width * 3) / 4; x++) {
        const o = (y * info.width + x) * 3;
        middle++;
        if (Math.min(data[o] as number, data[o + 1] as number, data[o + 2] as number) < 235) coloured++;
      }
    }
    assert.ok(coloured / middle > 0.9, `the middle of the map is imagery: ${coloured} of ${middle} pixels`);
    await page.close();
  });
});
