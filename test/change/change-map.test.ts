/**
 * The map page's DsmChange overlay in Chromium over the demo town: ticking "Change" over the
 * hurricane survey shows its change against the survey before it, with the legend.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_SEED, destroyedHouses } from '@nadir/demo-town';
import type { FastifyInstance } from 'fastify';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { buildServer } from '../../src/api/server.js';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { realClockEnvironment, TEST_NOW, testClock } from '../support/clock.js';
import { type DemoTown, demoTown } from '../support/demo-town.js';
import { PROJECT_ROOT } from '../support/fixtures.js';
import { BEFORE, HURRICANE } from './change-town.js';

const CHROMIUM = '/usr/bin/chromium';
const skipBrowser = existsSync(CHROMIUM) ? false : `no ${CHROMIUM}: install Debian's chromium for the browser test`;
const CHANGE_TILE = /\/tiles\/v3\/DsmChange\/(\d+)\/(\d+)\/(\d+)\.png\?(.*)$/;

describe('the map page shows the DsmChange overlay', { skip: skipBrowser, timeout: 300_000 }, () => {
  let town: DemoTown;
  let services: Services;
  let app: FastifyInstance;
  let base: string;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  const changeTiles: { query: URLSearchParams; status: number }[] = [];
  const errors: string[] = [];
  const house = destroyedHouses(DEFAULT_SEED).find((h) => Math.abs(h.x + 28) < 1 && Math.abs(h.y + 134) < 1);

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
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      viewport: { width: 1024, height: 768 },
      env: realClockEnvironment(),
    });
    await browser.clock.install({ time: TEST_NOW });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('response', (r) => {
      const match = CHANGE_TILE.exec(r.url());
      if (match) changeTiles.push({ query: new URLSearchParams(match[4]), status: r.status() });
    });
  });
  after(async () => {
    await browser?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
    await app?.close();
    await services?.close();
  });

  async function until(expression: string, timeout = 60_000): Promise<void> {
    const deadline = Date.now() + timeout;
    while (!(await page.evaluate(expression))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${expression}`);
      await sleep(50);
    }
  }

  test('ticking Change over the hurricane survey draws its change against its predecessor, with the legend', async () => {
    assert.ok(house);
    await page.goto(`${base}/#19/${house.lat.toFixed(6)}/${house.lon.toFixed(6)}/Vert`);
    await page.waitForSelector('#map[data-tiles="loaded"]', { timeout: 120_000 });
    assert.equal(changeTiles.length, 0, 'no change tiles before the box is ticked');
    await page.check('#change');
    await page.waitForSelector('#map[data-change="loaded"]', { timeout: 30_000 }).catch(async (error) => {
      throw new Error(
        `${error} data-change=${await page.getAttribute('#map', 'data-change')} errors=${errors.join(' | ')}`,
      );
    });
    assert.equal(await page.getAttribute('#map', 'data-change-pair'), `${HURRICANE},${BEFORE}`);
    assert.ok(changeTiles.length > 0);
    for (const tile of changeTiles) {
      assert.equal(tile.query.get('after'), HURRICANE);
      assert.equal(tile.query.get('baseline'), BEFORE);
      assert.equal(tile.query.get('apikey'), town.apiKey);
      assert.ok([200, 404].includes(tile.status), `status ${tile.status}`);
    }
    assert.ok(changeTiles.some((t) => t.status === 200));
    const legend = await page.textContent('.change-legend');
    assert.match(legend ?? '', /Height change 2025-04-02 → 2025-10-20/);
    assert.match(legend ?? '', /-10 m.*\+10 m/);
    // The destroyed house shows: red pixels (height lost) in the decoded tiles.
    await until("[...document.querySelectorAll('img.leaflet-tile')].every((i) => getComputedStyle(i).opacity === '1')");
    const red = Number(
      await page.evaluate(`(() => {
        let count = 0;
        for (const img of document.querySelectorAll('img.leaflet-tile-loaded')) {
          if (!img.src.includes('/DsmChange/') || img.naturalWidth !== 256) continue;
          const canvas = document.createElement('canvas');
          canvas.width = canvas.height = 256;
          const context = canvas.getContext('2d');
          context.drawImage(img, 0, 0);
          const { data } = context.getImageData(0, 0, 256, 256);
          for (let i = 0; i < data.length; i += 4) if (data[i + 3] > 0 && data[i] > 150 && data[i + 2] < 120) count++;
        }
        return count;
      })()`),
    );
    assert.ok(red > 300, `red (lost) pixels in the change tiles: ${red}`);
    await mkdir(join(PROJECT_ROOT, '.tmp'), { recursive: true });
    await page.screenshot({ path: join(PROJECT_ROOT, '.tmp', 'map-page-change.png') });
  });

  test('a panorama layer takes the overlay and its legend away; back on Vert they return', async () => {
    await page.selectOption('#layer', 'East');
    // The switch waits on a panorama (disabled, still ticked), rather than being lost.
    await until("!document.querySelector('.change-legend') && document.querySelector('#change').disabled");
    assert.equal(await page.getAttribute('#map', 'data-change'), null);
    await page.selectOption('#layer', 'Vert');
    await until(
      "document.querySelector('.change-legend') && document.getElementById('map').dataset.change === 'loaded'",
    );
  });
});
