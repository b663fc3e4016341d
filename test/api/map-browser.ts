/**
 * Chromium for the map page's tests (test/api/map-page.test.ts, map-viewer.test.ts): one browser
 * per test file, on Playwright's clock, recording the tile answers, the requests carrying a key,
 * and every console error and 4xx/5xx answer (the page should cause none on its own).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { realClockEnvironment, TEST_NOW } from '../support/clock.js';

export const CHROMIUM = '/usr/bin/chromium';
export const skipBrowser = existsSync(CHROMIUM)
  ? false
  : `no ${CHROMIUM}: install Debian's chromium for the browser test`;
export const TILE = 256;

export interface View {
  zoom: number;
  lat: number;
  lon: number;
}
/** The page's default: the demo town. */
export const DEMO_VIEW: View = { zoom: 17, lat: 29.946, lon: -85.418 };
export const hashFor = (type: string, view = DEMO_VIEW) =>
  `#${view.zoom}/${view.lat.toFixed(6)}/${view.lon.toFixed(6)}/${type}`;
export const TILE_URL = /\/tiles\/v3\/(\w+)\/(\d+)\/(\d+)\/(\d+)\.img\?(.*)$/;

export interface TileResponse {
  type: string;
  z: number;
  x: number;
  y: number;
  query: URLSearchParams;
  status: number;
  contentType: string;
}

/** The Web Mercator world pixel of a place at zoom z (256 px tiles). */
export function worldPixel(lat: number, lon: number, z: number): { x: number; y: number } {
  const size = TILE * 2 ** z;
  const phi = (lat * Math.PI) / 180;
  return {
    x: ((lon + 180) / 360) * size,
    y: ((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * size,
  };
}

// The layers' geometry, from the viewing directions, not from the tile formulas the page uses.
export const SQUASH = 192 / TILE;

/** "x/y" of every server tile that a ground box (world pixels) touches. */
export function tilesTouching(cx: number, cy: number, halfX: number, halfY: number): Set<string> {
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
export function groundHalfExtents(type: string, width: number, height: number): [number, number] {
  if (type === 'Vert') return [width / 2, height / 2];
  const along = height / 2 / SQUASH;
  return type === 'East' || type === 'West' ? [along, width / 2] : [width / 2, along];
}

/**
 * Where a server tile's east and south neighbours appear on screen (dx, dy) in each layer: the
 * viewing direction is up, panorama tiles are 192 px tall.
 */
export const SCREEN_STEPS: Record<string, { east: [number, number]; south: [number, number] }> = {
  Vert: { east: [256, 0], south: [0, 256] },
  North: { east: [256, 0], south: [0, 192] },
  South: { east: [-256, 0], south: [0, -192] },
  East: { east: [0, -192], south: [256, 0] },
  West: { east: [0, 192], south: [-256, 0] },
};

export interface MapBrowser {
  browser: BrowserContext;
  page: Page;
  tiles: TileResponse[];
  /** URLs of the requests that carried the key. */
  keyedRequests: string[];
  /** Console errors and warnings, page errors, 4xx/5xx answers, in order (tests take a mark). */
  problems: string[];
  /**
   * Polls an expression from outside the page: page.waitForFunction evaluates strings with
   * eval(), which the page's Content-Security-Policy (rightly) refuses.
   */
  until(expression: string, timeout?: number): Promise<void>;
  /** Waits until the layer's tiles are all in. */
  tilesLoaded(type: string): Promise<void>;
  /** What the page shows and waits on (view, tiles, message, open requests), for failure messages. */
  describe(): Promise<string>;
  /** Opens the page at a hash as a fresh load (a new hash alone is a same-document navigation). */
  open(base: string, hash: string): Promise<void>;
  /** The page's tile images as [src, width, height] on screen, under a selector or all. */
  shownTiles(within?: string): Promise<[string, number, number][]>;
  close(): Promise<void>;
}

export async function openMapBrowser(apiKey: string): Promise<MapBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'nadir-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
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
    acceptDownloads: true,
    // Not under scripts/test-dates.sh's libfaketime (Chromium would take a minute to start):
    // the browser gets the test instant from Playwright's clock instead.
    env: realClockEnvironment(),
  });
  await browser.clock.install({ time: TEST_NOW });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const tiles: TileResponse[] = [];
  const keyedRequests: string[] = [];
  const problems: string[] = [];
  /** Requests sent and not yet answered or failed: what a page waiting for its tiles waits on. */
  const unanswered = new Set<string>();
  /** Requests that failed (cancelled tiles among them: not a problem in itself), for diagnostics. */
  const failed: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes(apiKey)) keyedRequests.push(r.url());
    if (!r.url().startsWith('data:')) unanswered.add(r.url());
  });
  page.on('requestfinished', (r) => unanswered.delete(r.url()));
  page.on('requestfailed', (r) => {
    unanswered.delete(r.url());
    failed.push(`${r.failure()?.errorText} ${r.url().replace(apiKey, 'KEY')}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.url().replace(apiKey, 'KEY')}`);
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

  async function until(expression: string, timeout = 30_000): Promise<void> {
    const deadline = Date.now() + timeout;
    while (!(await page.evaluate(expression))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${expression}; ${problems.join(' | ')}`);
      await sleep(50);
    }
  }

  /** What the page shows and waits on, for the message of a failed wait (a CI log is all there is). */
  async function describe(): Promise<string> {
    const state = await page
      .evaluate(
        `JSON.stringify({ hash: location.hash, map: { ...document.getElementById('map').dataset },
          message: document.getElementById('message').textContent,
          tiles: [...document.querySelectorAll('img.leaflet-tile')].map((i) => [i.src.replace(/^.*\\/tiles\\/v3\\//, '').replace(/\\?.*/, ''), i.complete]) })`,
      )
      .catch((reason: unknown) => `(page unreadable: ${reason})`);
    const pending = [...unanswered].map((url) => url.replace(apiKey, 'KEY'));
    return `page: ${state}\nrequests open: ${JSON.stringify(pending)}\nfailed: ${failed.slice(-20).join(' | ')}\nproblems: ${problems.join(' | ')}`;
  }

  return {
    browser,
    page,
    tiles,
    keyedRequests,
    problems,
    until,
    async tilesLoaded(type) {
      try {
        await page.waitForSelector(`#map[data-layer="${type}"][data-tiles="loaded"]`, { timeout: 60_000 });
      } catch (error) {
        throw new Error(`${error}\n${await describe()}`);
      }
    },
    describe,
    async open(base, hash) {
      // Away first: going from the page to itself with another hash is a same-document navigation,
      // and the page's own hash update from the last move (150 ms after it) could land after it,
      // so the reload restored the old view (the test that opens a hash failed one run in five).
      await page.goto('about:blank');
      await page.goto(`${base}/${hash}`);
      await page.reload();
    },
    async shownTiles(within = '') {
      return (await page.evaluate(
        `[...document.querySelectorAll('${within} img.leaflet-tile-loaded')].filter((i) => i.src.includes('/tiles/v3/'))
          .map((i) => { const r = i.getBoundingClientRect(); return [i.src, Math.round(r.width), Math.round(r.height)]; })`,
      )) as [string, number, number][];
    },
    async close() {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
