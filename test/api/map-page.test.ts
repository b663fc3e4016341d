/** The map page at `/` (issue #5): what the server sends, then the page itself in Chromium over the demo town. */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import sharp from 'sharp';
import { buildServer } from '../../src/api/server.js';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { realClockEnvironment, TEST_NOW, testClock } from '../support/clock.js';
import { type DemoTown, demoTown } from '../support/demo-town.js';
import { PROJECT_ROOT } from '../support/fixtures.js';
import { type ApiFixture, errorBody, startApi } from './helpers.js';

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

const CHROMIUM = '/usr/bin/chromium';
const TILE = 256;
const SQUASH = 192 / TILE;
interface View {
  zoom: number;
  lat: number;
  lon: number;
}
/** The page's default: the demo town. */
const DEMO_VIEW: View = { zoom: 17, lat: 29.946, lon: -85.418 };
const hashFor = (type: string, view = DEMO_VIEW) =>
  `#${view.zoom}/${view.lat.toFixed(6)}/${view.lon.toFixed(6)}/${type}`;
const TILE_URL = /\/tiles\/v3\/(\w+)\/(\d+)\/(\d+)\/(\d+)\.img\?(.*)$/;

interface TileResponse {
  type: string;
  z: number;
  x: number;
  y: number;
  query: URLSearchParams;
  status: number;
  contentType: string;
}

/** The Web Mercator world pixel of a place at zoom z (256 px tiles). */
function worldPixel(lat: number, lon: number, z: number): { x: number; y: number } {
  const size = TILE * 2 ** z;
  const phi = (lat * Math.PI) / 180;
  return {
    x: ((lon + 180) / 360) * size,
    y: ((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * size,
  };
}

/** "x/y" of every server tile that a ground box (world pixels) touches. */
function tilesTouching(cx: number, cy: number, halfX: number, halfY: number): Set<string> {
  const found = new Set<string>();
  for (let x = Math.floor((cx - halfX) / TILE); x <= Math.floor((cx + halfX) / TILE); x++) {
    for (let y = Math.floor((cy - halfY) / TILE); y <= Math.floor((cy + halfY) / TILE); y++) found.add(`${x}/${y}`);
  }
  return found;
}

/**
 * The ground a layer shows in a map of width x height pixels, as half extents in server pixels.
 * Derived from the geometry (the screen's "up" is the viewing direction, panorama rows are
 * squashed to 192/256), not from the tile formulas the page uses.
 */
function groundHalfExtents(type: string, width: number, height: number): [number, number] {
  if (type === 'Vert') return [width / 2, height / 2];
  const along = height / 2 / SQUASH;
  return type === 'East' || type === 'West' ? [along, width / 2] : [width / 2, along];
}

/**
 * Where a server tile's east and south neighbours appear on screen (dx, dy) in each layer: the
 * viewing direction is up, panorama tiles are 192 px tall.
 */
const SCREEN_STEPS: Record<string, { east: [number, number]; south: [number, number] }> = {
  Vert: { east: [256, 0], south: [0, 256] },
  North: { east: [256, 0], south: [0, 192] },
  South: { east: [-256, 0], south: [0, -192] },
  East: { east: [0, -192], south: [256, 0] },
  West: { east: [0, 192], south: [-256, 0] },
};

const skipBrowser = existsSync(CHROMIUM) ? false : `no ${CHROMIUM}: install Debian's chromium for the browser test`;

describe('map page in Chromium over the demo town', { skip: skipBrowser, timeout: 600_000 }, () => {
  let town: DemoTown;
  let services: Services;
  let app: FastifyInstance;
  let base: string;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  const tiles: TileResponse[] = [];
  const keyedRequests: string[] = [];
  /** Console errors and 4xx/5xx answers, in order; tests look at those after a mark. */
  const problems: string[] = [];

  before(async () => {
    town = await demoTown();
    services = await createServices(
      parseConfig({ NADIR_DATA_DIR: town.dataDir, NADIR_LOG_LEVEL: 'silent' }, town.dataDir),
      testClock().now,
    );
    app = await buildServer(services);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    profile = await mkdtemp(join(tmpdir(), 'nadir-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1024, height: 768 },
      // Not under scripts/test-dates.sh's libfaketime (Chromium would take a minute to start):
      // the browser gets the test instant from Playwright's clock instead.
      env: realClockEnvironment(),
    });
    await browser.clock.install({ time: TEST_NOW });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('request', (r) => {
      if (r.url().includes(town.apiKey)) keyedRequests.push(r.url());
    });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} ${r.url().replace(town.apiKey, 'KEY')}`);
      const match = TILE_URL.exec(r.url());
      if (!match) return;
      const [, type, z, x, y, query] = match as unknown as [string, string, string, string, string, string];
      tiles.push({
        type,
        z: Number(z),
        x: Number(x),
        y: Number(y),
        query: new URLSearchParams(query),
        status: r.status(),
        contentType: r.headers()['content-type'] ?? '',
      });
    });
  });
  after(async () => {
    await browser?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
    await app?.close();
    await services?.close();
  });

  async function tilesLoaded(type: string): Promise<void> {
    await page.waitForSelector(`#map[data-layer="${type}"][data-tiles="loaded"]`, { timeout: 120_000 });
  }

  /**
   * Polls an expression from outside the page: page.waitForFunction evaluates strings with eval(),
   * which the page's Content-Security-Policy (rightly) refuses.
   */
  async function until(expression: string, timeout = 30_000): Promise<void> {
    const deadline = Date.now() + timeout;
    while (!(await page.evaluate(expression))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${expression}`);
      await sleep(50);
    }
  }

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

  /** Whether the server has imagery for a tile (asked directly, not by the page). */
  async function hasImagery(type: string, z: number, tile: string): Promise<boolean> {
    const response = await fetch(`${base}/tiles/v3/${type}/${z}/${tile}.img?apikey=${town.apiKey}`);
    await response.arrayBuffer();
    return response.status === 200;
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
      assert.ok(!(await hasImagery(type, view.zoom, tile)), `${type}: server tile ${tile} in view was not requested`);
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
    await page.goto(`${base}/${hashFor('West', view)}`);
    await page.reload();
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

  test('the key goes only into tile URLs, and is stored only when the user typed it', async () => {
    for (const url of keyedRequests)
      assert.match(new URL(url).pathname, /^\/(tiles\/v3\/|staticmap\/v2\/coverage\.json$)/, url);
    assert.equal(await page.evaluate("localStorage.getItem('nadir.apikey')"), null);
    await page.fill('#apikey', DEMO_KEY);
    await page.press('#apikey', 'Enter');
    assert.equal(await page.evaluate("localStorage.getItem('nadir.apikey')"), DEMO_KEY);
    await page.fill('#apikey', '');
    await page.press('#apikey', 'Enter');
    assert.equal(await page.evaluate("localStorage.getItem('nadir.apikey')"), null);
  });

  /** The town's surveys, oldest first. */
  const byDate = () => [...town.surveys].sort((a, b) => a.captureDate.localeCompare(b.captureDate));

  /** Opens the page at a hash as a fresh load (a new hash alone is a same-document navigation). */
  async function open(hash: string): Promise<void> {
    await page.goto(`${base}/${hash}`);
    await page.reload();
  }

  /** The page's tile images as [src, width, height] on screen, in a pane or all. */
  async function shownTiles(pane = ''): Promise<[string, number, number][]> {
    return (await page.evaluate(
      `[...document.querySelectorAll('${pane} img.leaflet-tile-loaded')].filter((i) => i.src.includes('/tiles/v3/'))
        .map((i) => { const r = i.getBoundingClientRect(); return [i.src, Math.round(r.width), Math.round(r.height)]; })`,
    )) as [string, number, number][];
  }

  test("over-zoom: past each layer's native zoom its deepest tiles are scaled up, not left blank", async () => {
    const from = tiles.length;
    const mark = problems.length;
    await open(hashFor('Vert', { ...DEMO_VIEW, zoom: 22 }));
    await tilesLoaded('Vert');
    const vert = tiles.slice(from).filter((t) => t.type === 'Vert');
    assert.ok(vert.length > 0);
    // The demo's Vert goes to z20 (coverage's maxZoom), its panoramas to z19.
    for (const t of vert) assert.deepEqual([t.z, t.status], [20, 200]);
    const shown = await shownTiles();
    assert.ok(shown.length > 0 && shown.every(([, w, h]) => w === 1024 && h === 1024), JSON.stringify(shown));
    const east = tiles.length;
    await page.selectOption('#layer', 'East');
    await tilesLoaded('East');
    const panorama = tiles.slice(east).filter((t) => t.type === 'East');
    assert.ok(panorama.length > 0);
    for (const t of panorama) assert.deepEqual([t.z, t.status], [19, 200]);
    const shownEast = (await shownTiles()).filter(([src]) => src.includes('/East/'));
    assert.ok(
      shownEast.every(([, w, h]) => w === 2048 && h === 1536),
      JSON.stringify(shownEast),
    );
    assert.deepEqual(problems.slice(mark), []);
  });

  test('the hash keeps the view, the layer and the date, and a reload restores them', async () => {
    const view: View = { zoom: 18, lat: 29.9468, lon: -85.4172 };
    const [, middle, newest] = byDate();
    const from = tiles.length;
    await open(`${hashFor('North', view)}/${middle!.captureDate}`);
    await tilesLoaded('North');
    assert.equal(await page.inputValue('#layer'), 'North');
    assert.equal(await page.inputValue('#date'), middle!.captureDate);
    const north = tiles.slice(from).filter((t) => t.type === 'North');
    assert.ok(north.length > 0);
    for (const t of north) {
      assert.equal(t.query.get('since'), middle!.captureDate);
      assert.equal(t.query.get('until'), middle!.captureDate);
    }
    await until(`document.getElementById('on-screen').dataset.surveys === '${middle!.id}'`);
    await page.selectOption('#date', newest!.captureDate);
    await tilesLoaded('North');
    assert.equal(await page.evaluate('location.hash'), `${hashFor('North', view)}/${newest!.captureDate}`);
    await until(`document.getElementById('on-screen').dataset.surveys === '${newest!.id}'`);
    await page.selectOption('#date', '');
    assert.equal(await page.evaluate('location.hash'), hashFor('North', view));
  });

  test('the swipe shows one date left of the slider and another right of it', async () => {
    const view: View = { zoom: 18, lat: 29.9468, lon: -85.4172 };
    const [, middle, newest] = byDate();
    await open(`${hashFor('Vert', view)}/${middle!.captureDate}/${newest!.captureDate}`);
    await tilesLoaded('Vert');
    assert.equal(await page.isVisible('#swipe'), true);
    assert.equal(await page.inputValue('#compare'), newest!.captureDate);
    const left = await shownTiles('.leaflet-tile-pane');
    const right = await shownTiles('.leaflet-compare-pane');
    assert.ok(left.length > 0 && right.length > 0);
    // Each side's tiles are drawn from its own date's survey (X-Survey-Ids).
    for (const [side, shown, survey] of [
      ['left', left, middle!],
      ['right', right, newest!],
    ] as const) {
      const response = await fetch(shown[0]![0]);
      await response.arrayBuffer();
      assert.equal(response.headers.get('x-survey-ids'), survey.id, side);
      for (const [src] of shown) assert.equal(new URL(src).searchParams.get('since'), survey.captureDate, side);
    }
    // The compare pane is clipped at the slider: half the map, then a quarter.
    const clipLeft = async () =>
      Number(
        /rect\([^,]+, [^,]+, [^,]+, (-?[\d.]+)px\)/.exec(
          String(await page.evaluate("document.querySelector('.leaflet-compare-pane').style.clip")),
        )?.[1],
      );
    const { width } = await mapSize();
    const half = await clipLeft();
    await page.evaluate(
      "(() => { const s = document.getElementById('swipe'); s.value = '25'; s.dispatchEvent(new Event('input')); })()",
    );
    assert.equal(Math.round(half - (await clipLeft())), width / 4);
    assert.equal(await page.evaluate("document.getElementById('swipe-divider').style.left"), `${width / 4}px`);
  });

  test('a refused key and an invalid filter are said in a message, not shown as a blank map', async () => {
    await open(hashFor('Vert'));
    await tilesLoaded('Vert');
    const badKey = `nadir_0123456789ab_${'x'.repeat(43)}`;
    const from = tiles.length;
    await page.fill('#apikey', badKey);
    await page.press('#apikey', 'Enter');
    await until("!document.getElementById('message').hidden");
    assert.match((await page.textContent('#message')) ?? '', /API key was refused \(UNAUTHORIZED|API key was refused/);
    assert.equal(tiles.slice(from).length, 0, 'no tile asked for with a refused key');
    assert.equal(await page.locator('img.leaflet-tile').count(), 0);

    await page.fill('#apikey', town.apiKey);
    await page.press('#apikey', 'Enter');
    await until("document.getElementById('message').hidden");
    await tilesLoaded('Vert');

    // Refused by the client before anything is sent...
    await page.fill('#since', 'yesterday');
    await page.press('#since', 'Enter');
    await until("/Invalid filter: since must be/.test(document.getElementById('message').textContent)");
    // ... and by the server (a month 13 has the right shape).
    await page.fill('#since', '2024-13-45');
    await page.press('#since', 'Enter');
    await until("/Invalid filter since \\(INVALID_PARAMETER\\)/.test(document.getElementById('message').textContent)");
    assert.equal(await page.locator('img.leaflet-tile').count(), 0);
    await page.fill('#since', '');
    await page.press('#since', 'Enter');
    await until("document.getElementById('message').hidden");
    await tilesLoaded('Vert');
  });
});
