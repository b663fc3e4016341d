/**
 * The map page as a product (issue 35, item 4), in Chromium over a demo town server of its own:
 * the timeline of capture dates with survey outlines, the change overlay bound to the chosen
 * dates, messages that stay until dismissed and never move the map, labelled swipe sides with
 * both layers named, the download square drawn as it is cut, and no console error zoomed out.
 * Each case leaves a screenshot in .tmp/map-product-*.png for a reviewer.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { aoiAround } from '../../packages/client/src/area.js';
import { aoiLonLatBounds } from '../../src/geo/aoi.js';
import { lonLatToMercator, resolutionAtZoom, tileBounds, tileForMercator } from '../../src/geo/web-mercator.js';
import { terrainRgbHeight } from '../../src/height-tiles/height-styles.js';
import { type DemoServer, startDemoServer } from '../client/demo-server.js';
import { type DemoTown, demoTown } from '../support/demo-town.js';
import { PROJECT_ROOT } from '../support/fixtures.js';
import { hashFor, type MapBrowser, openMapBrowser, skipBrowser, type View } from './map-browser.js';

describe('the map page as a product', { skip: skipBrowser, timeout: 400_000 }, () => {
  let town: DemoTown;
  let demo: DemoServer;
  let chrome: MapBrowser;
  let page: Page;
  const until = (expression: string, timeout?: number) => chrome.until(expression, timeout);
  const byDate = () => [...town.surveys].sort((a, b) => a.captureDate.localeCompare(b.captureDate));
  const VIEW: View = { zoom: 18, lat: 29.9468, lon: -85.4172 };

  async function screenshot(name: string): Promise<void> {
    await mkdir(join(PROJECT_ROOT, '.tmp'), { recursive: true });
    await page.screenshot({ path: join(PROJECT_ROOT, '.tmp', `map-product-${name}.png`) });
  }

  /** Opens the page at a hash with the account's key typed in, and waits for its tiles. */
  async function open(hash: string, type = 'Vert'): Promise<void> {
    await chrome.open(demo.url, hash);
    if ((await page.inputValue('#apikey')) === '') {
      await page.fill('#apikey', key);
      await page.press('#apikey', 'Enter');
    }
    await chrome.tilesLoaded(type);
  }
  let key: string;

  before(async () => {
    town = await demoTown();
    demo = await startDemoServer();
    key = (await demo.account('map-product')).apiKey;
    chrome = await openMapBrowser(key);
    page = chrome.page;
  });
  after(async () => {
    await chrome?.close();
    await demo?.close();
  });

  test('a timeline of the capture dates at the centre, with the surveys outlined; a press shows that date', async () => {
    const [oldest, , newest] = byDate();
    await open(hashFor('Vert', VIEW));
    await until(
      `document.getElementById('timeline').dataset.dates === '${byDate()
        .map((s) => s.captureDate)
        .join(',')}'`,
    );
    await until("document.getElementById('map').dataset.outlines === '3'");
    assert.equal(await page.textContent('#timeline button[aria-pressed="true"]'), newest!.captureDate);
    assert.equal(await page.locator('.leaflet-overlay-pane path').count(), 3, 'three outlines drawn');
    await screenshot('timeline');
    await page.click(`#timeline button:text("${oldest!.captureDate}")`);
    await until(`document.getElementById('on-screen').dataset.surveys === '${oldest!.id}'`);
    assert.equal(await page.inputValue('#date'), oldest!.captureDate);
    assert.match(page.url(), new RegExp(`/Vert/${oldest!.captureDate}$`));
    assert.equal(await page.textContent('#timeline button[aria-pressed="true"]'), oldest!.captureDate);
  });

  test('the change overlay follows the chosen dates: date against the one before, or against the swipe', async () => {
    const [oldest, middle, newest] = byDate();
    await open(`${hashFor('Vert', VIEW)}/${middle!.captureDate}`);
    await page.check('#change');
    await until("document.getElementById('map').dataset.change === 'loaded'");
    assert.equal(await page.getAttribute('#map', 'data-change-pair'), `${middle!.id},${oldest!.id}`);
    await page.selectOption('#compare', newest!.captureDate);
    await until(`document.getElementById('map').dataset.changePair === '${newest!.id},${middle!.id}'`);
    await until("document.getElementById('map').dataset.change === 'loaded'");
    await screenshot('change-dates');
    await page.selectOption('#compare', '');
    await page.selectOption('#date', oldest!.captureDate);
    await until("/oldest survey with heights/.test(document.getElementById('message').textContent)");
    assert.equal(await page.getAttribute('#map', 'data-change'), 'none');
    await page.uncheck('#change');
    await page.click('#message-close');
    await until("document.getElementById('message').hidden");
  });

  test('a notice stays until dismissed and never moves the map', async () => {
    await open(hashFor('East', VIEW), 'East');
    const before = await page.locator('#map').boundingBox();
    await page.click('#draw');
    await until("/switch to Vert or TrueOrtho first/.test(document.getElementById('message').textContent)");
    assert.deepEqual(await page.locator('#map').boundingBox(), before, 'the message lies on the map');
    // Updates come and go (a pan); the notice is still there until the reader closes it.
    await page.mouse.move(500, 400);
    await page.mouse.down();
    await page.mouse.move(540, 420, { steps: 3 });
    await page.mouse.up();
    await sleep(2000);
    assert.equal(await page.isVisible('#message'), true);
    await screenshot('notice');
    await page.click('#message-close');
    assert.equal(await page.isVisible('#message'), false);
  });

  test('the swipe labels its two dates, and the centre names the survey of each side', async () => {
    const [, middle, newest] = byDate();
    await open(`${hashFor('Vert', VIEW)}/latest/${middle!.captureDate}`);
    await until(`document.getElementById('on-screen').dataset.compareSurveys === '${middle!.id}'`);
    assert.equal(await page.textContent('#swipe-left'), `latest (${newest!.captureDate})`);
    assert.equal(await page.textContent('#swipe-right'), middle!.captureDate);
    const said = (await page.textContent('#on-screen')) ?? '';
    assert.match(said, new RegExp(`left ${newest!.captureDate} \\(${newest!.id.slice(0, 8)}\\)`));
    assert.match(said, new RegExp(`right ${middle!.captureDate} \\(${middle!.id.slice(0, 8)}\\)`));
    await screenshot('swipe');
  });

  test('the drawn area is replaced by the square that is cut', async () => {
    await open(hashFor('Vert', VIEW));
    await page.click('#draw');
    const box = await page.locator('#map').boundingBox();
    assert.ok(box);
    const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
    await page.mouse.move(cx - 80, cy - 20);
    await page.mouse.down();
    await page.mouse.move(cx + 80, cy + 20, { steps: 5 });
    await page.mouse.up();
    await until("document.getElementById('downloads').dataset.square !== undefined");
    const [west, south, east, north] = ((await page.getAttribute('#downloads', 'data-square')) ?? '')
      .split(',')
      .map(Number) as [number, number, number, number];
    // Square on the ground: as wide as high in Mercator metres, as wide as the drag (160 px at
    // zoom 18), and the server's own square of its AOI.
    const [x0, y0] = lonLatToMercator(west, south);
    const [x1, y1] = lonLatToMercator(east, north);
    assert.ok(Math.abs(x1 - x0 - (y1 - y0)) < 0.01, `square: ${x1 - x0} x ${y1 - y0} m`);
    assert.ok(Math.abs((x1 - x0) / resolutionAtZoom(18) - 160) < 2, `${(x1 - x0) / resolutionAtZoom(18)} px wide`);
    const aoi = aoiAround({ west, south, east, north });
    const cut = aoiLonLatBounds({ lon: aoi.point.lon, lat: aoi.point.lat, radius: aoi.radius });
    for (const [ours, server] of [
      [west, cut.minX],
      [south, cut.minY],
      [east, cut.maxX],
      [north, cut.maxY],
    ] as const)
      assert.ok(Math.abs(ours - server) < 2e-7, `${ours} vs ${server}`);
    await screenshot('square');
  });

  test('the 3D view: the heights as MapLibre terrain under Vert, from the map page at its view', async () => {
    await open(hashFor('Vert', { zoom: 18, lat: 29.946, lon: -85.418 }));
    const href = (await page.getAttribute('#view-3d', 'href')) ?? '';
    assert.match(href, /^\/map\/terrain\.html#18\/29\.946\d*\/-85\.418\d*$/);
    const mark = chrome.problems.length;
    const requested: string[] = [];
    const listen = (request: { url(): string }) => requested.push(request.url());
    page.on('request', listen);
    // The key the map page remembered (the server took it) is the 3D view's.
    await page.goto(`${demo.url}${href}`);
    await until("document.body.dataset.idle === 'yes'", 60_000);
    page.off('request', listen);
    const terrain = requested.filter((url) => url.includes('/tiles/v3/DetailDsm/terrain-rgb/'));
    const imagery = requested.filter((url) => url.includes('/tiles/v3/Vert/'));
    assert.ok(terrain.length > 0, 'terrain tiles asked for');
    assert.ok(imagery.length > 0, 'imagery draped');
    // The height MapLibre reads under the centre is the DSM's there: decode the terrain tile itself.
    const height = Number(await page.getAttribute('body', 'data-centre-height'));
    const z = 18;
    const { x, y } = tileForMercator(...lonLatToMercator(-85.418, 29.946), z);
    const [cx, cy] = lonLatToMercator(-85.418, 29.946);
    const box = tileBounds({ z, x, y });
    const tile = await fetch(`${demo.url}/tiles/v3/DetailDsm/terrain-rgb/${z}/${x}/${y}.png?apikey=${key}`);
    const { data } = await sharp(Buffer.from(await tile.arrayBuffer()))
      .raw()
      .toBuffer({ resolveWithObject: true });
    const px = Math.floor(((cx - box.minX) / (box.maxX - box.minX)) * 256);
    const py = Math.floor(((box.maxY - cy) / (box.maxY - box.minY)) * 256);
    const at = (py * 256 + px) * 3;
    const expected = terrainRgbHeight(data[at] as number, data[at + 1] as number, data[at + 2] as number);
    assert.ok(Math.abs(height - expected) < 1.5, `MapLibre's height ${height} m, the tile's ${expected} m`);
    // SwiftShader's own notes (headless Chromium draws WebGL in software) are not the page's.
    assert.deepEqual(
      chrome.problems.slice(mark).filter((p) => !/GL Driver Message/.test(p)),
      [],
      'no console error, no 4xx',
    );
    assert.equal(await page.textContent('#terrain-note'), '');
    await screenshot('3d');
  });

  test('zoomed out, no console error and no 4xx: the mask asks only within the surveys', async () => {
    const mark = chrome.problems.length;
    await open(hashFor('Vert', { zoom: 13, lat: 29.946, lon: -85.418 }));
    await sleep(1000);
    await open(hashFor('Vert', { zoom: 11, lat: 29.9, lon: -85.5 }));
    await sleep(1000);
    assert.deepEqual(chrome.problems.slice(mark), []);
    await screenshot('zoomed-out');
  });
});

describe('the map page over a configured basemap', { skip: skipBrowser, timeout: 120_000 }, () => {
  let basemap: Server;
  let asked: string[];
  let demo: DemoServer;
  let chrome: MapBrowser;
  let key: string;

  before(async () => {
    asked = [];
    // An XYZ basemap of its own: every tile a solid magenta, so the page's pixels say where it shows.
    const magenta = await sharp({ create: { width: 256, height: 256, channels: 3, background: '#ff00ff' } })
      .png()
      .toBuffer();
    basemap = createServer((request, response) => {
      asked.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'image/png', 'access-control-allow-origin': '*' }).end(magenta);
    });
    await new Promise<void>((resolve) => basemap.listen(0, '127.0.0.1', resolve));
    const { port } = basemap.address() as AddressInfo;
    demo = await startDemoServer({
      NADIR_MAP_BASEMAP: `http://127.0.0.1:${port}/{z}/{x}/{y}.png`,
      NADIR_MAP_BASEMAP_ATTRIBUTION: 'Test basemap',
    });
    key = (await demo.account('basemap')).apiKey;
    chrome = await openMapBrowser(key);
  });
  after(async () => {
    await chrome?.close();
    await demo?.close();
    await new Promise((resolve) => basemap?.close(resolve));
  });

  test('drawn under the imagery where there is none, credited, allowed by the page policy', async () => {
    const { page } = chrome;
    const mark = chrome.problems.length;
    await chrome.open(demo.url, hashFor('Vert', { zoom: 15, lat: 29.946, lon: -85.418 }));
    await page.fill('#apikey', key);
    await page.press('#apikey', 'Enter');
    await chrome.tilesLoaded('Vert');
    assert.ok(
      asked.some((url) => /^\/15\/\d+\/\d+\.png$/.test(url)),
      `basemap tiles asked: ${asked.slice(0, 3)}`,
    );
    await chrome.until(
      "[...document.querySelectorAll('img.leaflet-tile')].every((i) => getComputedStyle(i).opacity === '1')",
    );
    const shot = await page.screenshot();
    const { data, info } = await sharp(shot).raw().toBuffer({ resolveWithObject: true });
    // Left of the middle, far from the town (about 130 px across at zoom 15): the basemap's magenta.
    const box = await page.locator('#map').boundingBox();
    const [px, py] = [Math.round(box!.x + box!.width * 0.15), Math.round(box!.y + box!.height * 0.5)];
    const at = (py * info.width + px) * info.channels;
    assert.deepEqual([data[at], data[at + 1], data[at + 2]], [255, 0, 255]);
    assert.match((await page.textContent('.leaflet-control-attribution')) ?? '', /Test basemap/);
    assert.deepEqual(chrome.problems.slice(mark), []);
    await mkdir(join(PROJECT_ROOT, '.tmp'), { recursive: true });
    await page.screenshot({ path: join(PROJECT_ROOT, '.tmp', 'map-product-basemap.png') });
  });
});
