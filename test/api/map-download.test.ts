/**
 * The map page's area downloads in Chromium (issue 20): a rectangle drawn on the map, its coverage,
 * and per-type files at native size through the token flow, against a real `nadir serve` with a
 * database of its own (the usage it records is counted here): one coverage call, one token, one
 * transaction for every file of the area; GDAL opens what the browser saved.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { type DemoServer, startDemoServer } from '../client/demo-server.js';
import { realClockEnvironment, TEST_NOW } from '../support/clock.js';
import { type DemoTown, demoTown } from '../support/demo-town.js';

const run = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';
const skipBrowser = existsSync(CHROMIUM) ? false : `no ${CHROMIUM}: install Debian's chromium for the browser test`;

interface GdalInfo {
  driverShortName: string;
  size: [number, number];
  coordinateSystem: { wkt: string };
  bands: { type: string; noDataValue?: number }[];
}

describe('map page: an area drawn on the map downloads at native size as one transaction', {
  skip: skipBrowser,
  timeout: 300_000,
}, () => {
  let town: DemoTown;
  let demo: DemoServer;
  let account: { name: string; apiKey: string };
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  const requests: URL[] = [];

  before(async () => {
    town = await demoTown();
    demo = await startDemoServer();
    account = await demo.account('map-viewer');
    profile = await mkdtemp(join(tmpdir(), 'nadir-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      viewport: { width: 1024, height: 768 },
      acceptDownloads: true,
      env: realClockEnvironment(),
    });
    await browser.clock.install({ time: TEST_NOW });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('request', (r) => requests.push(new URL(r.url())));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
    });
  });
  after(async () => {
    await browser?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
    await demo?.close();
  });

  async function until(expression: string, timeout = 60_000): Promise<void> {
    const deadline = Date.now() + timeout;
    while (!(await page.evaluate(expression))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${expression}; ${problems.join(' | ')}`);
      await sleep(50);
    }
  }

  test('draw -> coverage -> TrueOrtho and DetailDsm GeoTIFFs that GDAL opens, billed once', async () => {
    await page.goto(`${demo.url}/#19/29.946000/-85.418000/Vert`);
    // No demo key on this server: the page asks for one instead of showing a blank map.
    await until("/Enter an API key/.test(document.getElementById('message').textContent)");
    await page.fill('#apikey', account.apiKey);
    await page.press('#apikey', 'Enter');
    await page.waitForSelector('#map[data-layer="Vert"][data-tiles="loaded"]', { timeout: 120_000 });

    await page.click('#draw');
    const box = await page.locator('#map').boundingBox();
    assert.ok(box);
    const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
    const before = requests.length;
    await page.mouse.move(cx - 60, cy - 40);
    await page.mouse.down();
    await page.mouse.move(cx + 60, cy + 40, { steps: 5 });
    await page.mouse.up();
    await page.waitForSelector('#downloads-list button.download', { timeout: 60_000 });

    // One coverage call for the area, for both types; every survey there has both.
    const coverage = requests.slice(before).filter((url) => url.pathname === '/staticmap/v2/coverage.json');
    assert.equal(coverage.length, 1);
    assert.equal(coverage[0]!.searchParams.get('resources'), 'TrueOrtho,DetailDsm');
    const radius = Number(coverage[0]!.searchParams.get('radius'));
    assert.ok(radius > 10 && radius < 30, `radius ${radius}`);
    const buttons = page.locator('#downloads-list button.download');
    assert.equal(await buttons.count(), town.surveys.length * 2);

    const newest = [...town.surveys].sort((a, b) => b.captureDate.localeCompare(a.captureDate))[0]!;
    const saved: Record<string, GdalInfo> = {};
    for (const type of ['TrueOrtho', 'DetailDsm']) {
      const button = page.locator(`#downloads-list button[data-type="${type}"][data-survey="${newest.id}"]`);
      const label = (await button.textContent()) ?? '';
      const [, size] = /\((\d+)x\1 px/.exec(label) ?? [];
      const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), button.click()]);
      assert.equal(download.suggestedFilename(), `${newest.captureDate}_${newest.id}_${type}.tif`);
      const path = join(demo.scratch, download.suggestedFilename());
      await download.saveAs(path);
      const { stdout } = await run('gdalinfo', ['-json', path]);
      const info = JSON.parse(stdout) as GdalInfo;
      assert.equal(info.driverShortName, 'GTiff');
      // Native size: 2 x radius / the type's GSD, as the list said.
      assert.deepEqual(info.size, [Number(size), Number(size)], type);
      assert.match(info.coordinateSystem.wkt, /Pseudo-Mercator|3857/);
      saved[type] = info;
    }
    assert.equal(saved.DetailDsm!.bands[0]!.type, 'Float32');
    assert.ok(saved.TrueOrtho!.bands.length >= 3);
    // DetailDsm's GSD is twice TrueOrtho's in the demo town: half the pixels per side.
    assert.ok(Math.abs(saved.TrueOrtho!.size[0] - 2 * saved.DetailDsm!.size[0]) <= 1);

    // Both files on the coverage call's token, no other coverage call: one transaction.
    const imagery = requests.slice(before).filter((url) => url.pathname.startsWith('/staticmap/v2/surveys/'));
    assert.equal(imagery.length, 2);
    assert.equal(new Set(imagery.map((url) => url.searchParams.get('transactionToken'))).size, 1);
    assert.equal(requests.slice(before).filter((url) => url.pathname === '/staticmap/v2/coverage.json').length, 1);
    assert.equal(await demo.transactions(account.name), 1);
    assert.deepEqual(problems, []);
  });
});
