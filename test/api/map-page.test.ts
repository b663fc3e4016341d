/** The map page at `/` (issue #5): what the server sends, then the page itself in Chromium over the demo town. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { buildServer } from '../../src/api/server.js';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { testClock } from '../support/clock.js';
import { type DemoTown, demoTown } from '../support/demo-town.js';
import { PROJECT_ROOT } from '../support/fixtures.js';
import { noteSecret } from '../support/secret-watch.js';
import { type ApiFixture, errorBody, startApi } from './helpers.js';
import {
  DEMO_VIEW,
  groundHalfExtents,
  hashFor,
  type MapBrowser,
  openMapBrowser,
  SCREEN_STEPS,
  skipBrowser,
  TILE,
  TILE_URL,
  type TileResponse,
  tilesTouching,
  type View,
  worldPixel,
} from './map-browser.js';

const DEMO_KEY = `nadir_0123456789ab_${'k'.repeat(43)}`;

/** A GET whose path reaches the server exactly as written (fetch would resolve `..` first). */
function rawGet(base: string, path: string): Promise<{ status: number; type: string; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    request({ hostname, port, path, method: 'GET' }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, type: response.headers['content-type'] ?? '', body }),
      );
    })
      .on('error', reject)
      .end();
  });
}

describe('map page over HTTP', () => {
  let api: ApiFixture;
  let demo: ApiFixture;

  before(async () => {
    api = await startApi();
    // `nadir demo` writes the key file before `nadir serve` starts.
    demo = await startApi({
      adjust: (services) => {
        writeFileSync(join(services.config.dataDir, 'demo-api-key'), `${DEMO_KEY}\n`);
        return services;
      },
    });
  });
  after(async () => {
    await api.close();
    await demo.close();
  });

  test('/ is an HTML page that loads Leaflet and its own module from this server only', async () => {
    const response = await api.get('/');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /img-src 'self' data:(;|$)/);
    assert.match(csp, /connect-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe|https?:|\*/);
    const html = await response.text();
    assert.match(html, /<script src="\/map\/leaflet\/leaflet\.js"><\/script>/);
    assert.match(html, /<link rel="stylesheet" href="\/map\/leaflet\/leaflet\.css">/);
    assert.match(html, /<script type="module" src="\/map\/map\.js"><\/script>/);
    assert.doesNotMatch(html, /<script>|<script [^>]*>[^<]/, 'no inline script');
    assert.doesNotMatch(html, /https?:\/\//i, 'no external URL at all');
    assert.doesNotMatch(html, /src="\/\//, 'no protocol-relative URL');
  });

  test('Leaflet, its images and the page script come with their content types and caching', async () => {
    const expected: [string, string][] = [
      ['/map/leaflet/leaflet.js', 'text/javascript; charset=utf-8'],
      ['/map/leaflet/leaflet.css', 'text/css; charset=utf-8'],
      ['/map/leaflet/images/layers.png', 'image/png'],
      ['/map/leaflet/images/marker-icon-2x.png', 'image/png'],
      ['/map/map.js', 'text/javascript; charset=utf-8'],
      ['/map/map.css', 'text/css; charset=utf-8'],
      ['/map/grids.js', 'text/javascript; charset=utf-8'],
      ['/map/area-download.js', 'text/javascript; charset=utf-8'],
      ['/map/change-layer.js', 'text/javascript; charset=utf-8'],
      ['/map/client/index.js', 'text/javascript; charset=utf-8'],
      ['/map/client/client.js', 'text/javascript; charset=utf-8'],
      ['/map/client/token-store.js', 'text/javascript; charset=utf-8'],
    ];
    for (const [path, type] of expected) {
      const response = await api.get(path);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-type'), type, path);
      assert.ok(response.headers.get('cache-control'), `${path} has Cache-Control`);
      assert.ok((await response.arrayBuffer()).byteLength > 0, path);
    }
    const leaflet = await (await api.get('/map/leaflet/leaflet.js')).text();
    assert.match(leaflet, /Leaflet 1\.9\.\d/);
    assert.equal((await api.get('/map/leaflet/leaflet.css')).headers.get('cache-control'), 'public, max-age=86400');
  });

  test('only the listed files are served: traversal and other package files are 404 JSON', async () => {
    const attempts = [
      '/map/leaflet/../../package.json',
      '/map/leaflet/../../../package.json',
      '/map/leaflet/%2e%2e/%2e%2e/package.json',
      '/map/leaflet/..%2f..%2fpackage.json',
      '/map/leaflet/%2E%2E%2F%2E%2E%2F%2E%2E%2Fpackage.json',
      '/map/leaflet/..%5c..%5cpackage.json',
      '/map/leaflet/images/../../../../package.json',
      '/map/leaflet/images/%2e%2e%2f%2e%2e%2fleaflet.js',
      '/map/../package.json',
      '/map/leaflet/leaflet-src.js',
      '/map/leaflet/leaflet.js.map',
      '/map/leaflet/images/',
      '/map/page/index.html',
      // The client's Node half and anything but its browser entry's files stay unserved.
      '/map/client/node/index.js',
      '/map/client/node/download.js',
      '/map/client/index.d.ts',
      '/map/client/index.js.map',
      '/map/client/../../package.json',
      '/map/client/%2e%2e/package.json',
      '/map/client/',
    ];
    for (const path of attempts) {
      const response = await rawGet(api.baseUrl, path);
      assert.equal(response.status, 404, path);
      assert.match(response.type, /^application\/json/, path);
      const body = JSON.parse(response.body) as { code: string };
      assert.equal(body.code, 'NOT_FOUND', path);
      assert.doesNotMatch(response.body, /"dependencies"|"version"/, path);
    }
    await errorBody(await api.get('/map/leaflet/nope.js'));
  });

  test('the demo key is in the page only when <data>/demo-api-key exists', async () => {
    const without = await (await api.get('/')).text();
    assert.doesNotMatch(without, /nadir-demo-key/);
    assert.doesNotMatch(without, /nadir_[0-9a-f]{12}_/);

    const html = await (await demo.get('/')).text();
    assert.ok(html.includes(`<meta name="nadir-demo-key" content="${DEMO_KEY}">`));
    assert.equal(html.split(DEMO_KEY).length, 2, 'the key appears once');
    assert.ok(!demo.logs.join('\n').includes(DEMO_KEY), 'the key is never logged');
  });
});

describe('map page in Chromium over the demo town', { skip: skipBrowser, timeout: 600_000 }, () => {
  let town: DemoTown;
  let services: Services;
  let app: FastifyInstance;
  let base: string;
  let chrome: MapBrowser;
  let page: Page;
  let tiles: TileResponse[];
  let problems: string[];
  const until = (expression: string, timeout?: number) => chrome.until(expression, timeout);
  const tilesLoaded = (type: string) => chrome.tilesLoaded(type);

  before(async () => {
    town = await demoTown();
    services = await createServices(
      parseConfig({ NADIR_DATA_DIR: town.dataDir, NADIR_LOG_LEVEL: 'silent' }, town.dataDir),
      testClock().now,
    );
    app = await buildServer(services);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    chrome = await openMapBrowser(town.apiKey);
    ({ page, tiles, problems } = chrome);
  });
  after(async () => {
    await chrome?.close();
    await app?.close();
    await services?.close();
  });

  async function screenshot(name: string): Promise<void> {
    await mkdir(join(PROJECT_ROOT, '.tmp'), { recursive: true });
    // Leaflet fades tiles in after their load event.
    await until("[...document.querySelectorAll('img.leaflet-tile')].every((i) => getComputedStyle(i).opacity === '1')");
    await page.screenshot({ path: join(PROJECT_ROOT, '.tmp', `map-page-${name}.png`) });
  }

  async function mapSize(): Promise<{ width: number; height: number }> {
    const box = await page.locator('#map').boundingBox();
    assert.ok(box);
    return { width: Math.round(box.width), height: Math.round(box.height) };
  }

  /**
   * The layer's requested server tiles are those its view of the ground touches (2 px of slack for
   * rounding) and that hold imagery: the page asks for none where the server has none.
   */
  async function assertTilesCoverView(type: string, requested: TileResponse[], view = DEMO_VIEW): Promise<void> {
    const { width, height } = await mapSize();
    const centre = worldPixel(view.lat, view.lon, view.zoom);
    assert.ok(requested.every((t) => t.z === view.zoom));
    const [halfX, halfY] = groundHalfExtents(type, width, height);
    const must = tilesTouching(centre.x, centre.y, halfX - 2, halfY - 2);
    const may = tilesTouching(centre.x, centre.y, halfX + 2, halfY + 2);
    const got = new Set(requested.map((t) => `${t.x}/${t.y}`));
    for (const tile of must) {
      if (got.has(tile)) continue;
      // Asked directly, not by the page: a tile left out must be one without imagery.
      const direct = await fetch(`${base}/tiles/v3/${type}/${view.zoom}/${tile}.img?apikey=${town.apiKey}`);
      await direct.arrayBuffer();
      assert.equal(direct.status, 404, `${type}: server tile ${tile} in view was not requested`);
    }
    for (const tile of got) assert.ok(may.has(tile), `${type}: server tile ${tile} is outside the view`);
    const centreTile = `${Math.floor(centre.x / TILE)}/${Math.floor(centre.y / TILE)}`;
    assert.ok(got.has(centreTile), `${type}: the centre tile ${centreTile}`);
  }

  /** The centre tile and its east and south neighbours are laid out as the viewing direction says. */
  async function assertLayout(type: string, view = DEMO_VIEW): Promise<void> {
    const placed = (await page.evaluate(
      `[...document.querySelectorAll('img.leaflet-tile')].filter((i) => i.src.includes('/tiles/v3/${type}/'))
        .map((i) => { const r = i.getBoundingClientRect(); return [i.src, r.left, r.top, r.width, r.height]; })`,
    )) as [string, number, number, number, number][];
    const at = new Map<string, [number, number]>();
    for (const [src, left, top, width, height] of placed) {
      const [, , z, x, y] = TILE_URL.exec(src) ?? [];
      assert.deepEqual([width, height], [256, type === 'Vert' ? 256 : 192], `${type} tile size`);
      if (Number(z) === view.zoom) at.set(`${x}/${y}`, [Math.round(left), Math.round(top)]);
    }
    const centre = worldPixel(view.lat, view.lon, view.zoom);
    const [cx, cy] = [Math.floor(centre.x / TILE), Math.floor(centre.y / TILE)];
    const origin = at.get(`${cx}/${cy}`);
    assert.ok(origin, `${type}: the centre tile is on screen`);
    const steps = SCREEN_STEPS[type]!;
    for (const [name, tile, [dx, dy]] of [
      ['east', `${cx + 1}/${cy}`, steps.east],
      ['south', `${cx}/${cy + 1}`, steps.south],
    ] as const) {
      assert.deepEqual(at.get(tile), [origin[0] + dx, origin[1] + dy], `${type}: the tile ${name} of the centre`);
    }
  }

  function assertImages(type: string, requested: TileResponse[]): void {
    const ok = requested.filter((t) => t.status === 200);
    assert.ok(ok.length > 0, `${type}: no tile loaded (statuses ${requested.map((t) => t.status).join(',')})`);
    for (const t of ok) assert.match(t.contentType, /^image\/(jpeg|png)$/, `${type} ${t.x}/${t.y}`);
    for (const t of requested) assert.equal(t.status, 200, `${type} ${t.x}/${t.y}: asked for a tile without imagery`);
  }

  test('opens on the demo town with the demo key and shows Vert tiles, with no console error and no 4xx', async () => {
    await page.goto(`${base}/`);
    await tilesLoaded('Vert');
    await until("document.getElementById('on-screen').dataset.surveys !== undefined");
    assert.deepEqual(problems, []);
    // The newest survey at the centre is named (X-Survey-Ids), with its date.
    const newest = [...town.surveys].sort((a, b) => b.captureDate.localeCompare(a.captureDate))[0]!;
    assert.equal(await page.getAttribute('#on-screen', 'data-surveys'), newest.id);
    assert.match((await page.textContent('#on-screen')) ?? '', new RegExp(`On screen: ${newest.captureDate}`));
    // The date pickers list the dates at the centre, newest first.
    const dates = (await page.evaluate(
      "[...document.querySelectorAll('#date option')].map((o) => o.value)",
    )) as string[];
    assert.deepEqual(dates, [
      '',
      ...town.surveys
        .map((t) => t.captureDate)
        .sort()
        .reverse(),
    ]);
    assert.equal(await page.inputValue('#apikey'), town.apiKey);
    assert.equal(await page.evaluate('location.hash'), hashFor('Vert'));
    const vert = tiles.filter((t) => t.type === 'Vert');
    assert.ok(vert.every((t) => t.query.get('apikey') === town.apiKey && [...t.query].length === 1));
    assertImages('Vert', vert);
    await assertTilesCoverView('Vert', vert);
    await assertLayout('Vert');
    const decoded = await page.evaluate(
      "[...document.querySelectorAll('img.leaflet-tile-loaded')].filter((i) => i.src.includes('/tiles/v3/') && i.naturalWidth === 256).length",
    );
    assert.ok(Number(decoded) > 0, 'tile images decoded in the page');
    await screenshot('vert');
  });

  for (const type of ['East', 'South', 'West', 'North']) {
    test(`${type} shows the server tiles of the same place, turned so that ${type.toLowerCase()} is up`, async () => {
      const from = tiles.length;
      const mark = problems.length;
      await page.selectOption('#layer', type);
      await tilesLoaded(type);
      assert.deepEqual(problems.slice(mark), [], `${type}: no console error, no 4xx`);
      assert.equal(await page.textContent('#direction'), `${type}: looking ${type.toLowerCase()}`);
      // Switching keeps the centre: the hash names the same place in real coordinates.
      assert.equal(await page.evaluate('location.hash'), hashFor(type));
      const requested = tiles.slice(from).filter((t) => t.type === type);
      assertImages(type, requested);
      await assertTilesCoverView(type, requested);
      await assertLayout(type);
      await screenshot(type.toLowerCase());
    });
  }

  test('the URL hash chooses the place, the zoom and the layer', async () => {
    const view: View = { zoom: 18, lat: 29.9468, lon: -85.4172 };
    const from = tiles.length;
    // A new hash alone is a same-document navigation: reload so the page starts from it.
    await chrome.open(base, hashFor('West', view));
    await tilesLoaded('West');
    assert.equal(await page.inputValue('#layer'), 'West');
    const requested = tiles.slice(from).filter((t) => t.type === 'West');
    assertImages('West', requested);
    await assertTilesCoverView('West', requested, view);
    await assertLayout('West', view);
    await page.selectOption('#layer', 'Vert');
    await tilesLoaded('Vert');
    assert.equal(await page.evaluate('location.hash'), hashFor('Vert', view));
  });

  test('filters reload the tiles with only the non-empty parameters', async () => {
    await page.selectOption('#layer', 'Vert');
    await tilesLoaded('Vert');
    const from = tiles.length;
    await page.fill('#since', '2020-01-01');
    await page.fill('#exclude', 'disaster:fire');
    await page.press('#exclude', 'Enter');
    await until("[...document.querySelectorAll('img.leaflet-tile')].some((i) => i.src.includes('exclude='))");
    await tilesLoaded('Vert');
    const after = tiles.slice(from).filter((t) => t.query.get('exclude') === 'disaster:fire');
    assert.ok(after.length > 0);
    for (const t of after) {
      assert.equal(t.query.get('since'), '2020-01-01');
      assert.equal(t.query.has('until'), false);
      assert.equal(t.query.has('include'), false);
    }
    assertImages('Vert', after);
  });

  test('PNG tiles decode in Chromium to exactly the pixels sharp reads, transparent margins included', async () => {
    let compared = 0;
    let partial = 0;
    for (const z of [15, 16, 17]) {
      const centre = worldPixel(DEMO_VIEW.lat, DEMO_VIEW.lon, z);
      for (const [dx, dy] of [-1, 0, 1].flatMap((dx) => [-1, 0, 1].map((dy) => [dx, dy] as const))) {
        const x = Math.floor(centre.x / TILE) + dx;
        const y = Math.floor(centre.y / TILE) + dy;
        const url = `${base}/tiles/v3/Vert/${z}/${x}/${y}.png?apikey=${town.apiKey}`;
        const response = await fetch(url);
        if (response.status !== 200) continue;
        // A full tile is RGB, a partial one RGBA; the canvas reads both as RGBA.
        const expected = await sharp(Buffer.from(await response.arrayBuffer()))
          .ensureAlpha()
          .raw()
          .toBuffer();
        // The page's own <img> (its CSP allows images from this server), read back through a canvas.
        const decoded = (await page.evaluate(`(async () => {
          const img = new Image();
          img.src = ${JSON.stringify(url)};
          await img.decode();
          const canvas = document.createElement('canvas');
          canvas.width = img.naturalWidth;
          canvas.height = img.naturalHeight;
          const context = canvas.getContext('2d');
          context.drawImage(img, 0, 0);
          return Array.from(context.getImageData(0, 0, canvas.width, canvas.height).data);
        })()`)) as number[];
        assert.ok(Buffer.from(decoded).equals(expected), `${z}/${x}/${y}.png decodes alike`);
        compared++;
        const alphas = new Set(expected.filter((_, i) => i % 4 === 3));
        if (alphas.has(0) && alphas.has(255)) partial++;
      }
    }
    assert.ok(compared >= 9, `${compared} tiles compared`);
    assert.ok(partial > 0, 'at least one tile is partly transparent');
  });

  test('the key goes only into tile URLs, and is stored only when the user typed it and the server took it', async () => {
    for (const url of chrome.keyedRequests)
      assert.match(new URL(url).pathname, /^\/(tiles\/v3\/|staticmap\/v2\/coverage\.json$|stac\/v1\/search$)/, url);
    assert.equal(await page.evaluate("localStorage.getItem('nadir.apikey')"), null);
    // A mistyped key is refused by the server: not kept to replace the demo key after a reload.
    await page.fill('#apikey', DEMO_KEY);
    await page.press('#apikey', 'Enter');
    await chrome.until("/API key/.test(document.getElementById('message').textContent)");
    assert.equal(await page.evaluate("localStorage.getItem('nadir.apikey')"), null);
    // A key of the user's own that the server takes is kept.
    const account = await services.accounts.createAccount({
      name: `typed-${randomUUID()}`,
      rasterSubscription: true,
      monthlyAllowance: 1,
    });
    const typed = (await services.accounts.issueApiKey(account.id)).key;
    noteSecret(typed);
    await page.fill('#apikey', typed);
    await page.press('#apikey', 'Enter');
    await chrome.until(`localStorage.getItem('nadir.apikey') === ${JSON.stringify(typed)}`);
    await page.fill('#apikey', '');
    await page.press('#apikey', 'Enter');
    await chrome.until("localStorage.getItem('nadir.apikey') === null");
  });
});
