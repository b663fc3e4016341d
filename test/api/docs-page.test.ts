/**
 * `/docs` as a newcomer meets it after `nadir demo` and `nadir serve`: Swagger UI in Chromium over
 * the demo town, with nothing typed but the key. "Try it out" on coverage, as prefilled, finds the
 * demo's surveys (it was prefilled with a Wisconsin point and 2020-2024 dates: 0 surveys); the
 * imagery path reads as the specification's `{type}.{format}`; the page logs no error (a CSP
 * refusing the UI's inline styles filled the console).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { type DemoServer, startDemoServer } from '../client/demo-server.js';
import { CHROMIUM, skipBrowser } from './map-browser.js';

describe('/docs on the demo town', { skip: skipBrowser }, () => {
  let demo: DemoServer;
  let browser: BrowserContext;
  let profile: string;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    demo = await startDemoServer();
    profile = await mkdtemp(join(tmpdir(), 'nadir-docs-chromium-'));
    browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    await page.goto(`${demo.url}/docs`);
    await page.waitForSelector('.opblock-summary-path');
  });
  after(async () => {
    await browser?.close();
    await rm(profile, { recursive: true, force: true });
    await demo?.close();
  });

  test('paths read as the specification writes them: {type}.{format}', async () => {
    const paths = await page.$$eval('.opblock-summary-path', (nodes) => nodes.map((n) => n.getAttribute('data-path')));
    assert.ok(paths.includes('/staticmap/v2/surveys/{surveyId}/{type}.{format}'), paths.join('\n'));
    assert.ok(!paths.includes('/staticmap/v2/surveys/{surveyId}/{file}'));
  });

  test('"Try it out" on coverage, as prefilled, finds the demo surveys', async () => {
    const { apiKey } = await demo.account('docs-try');
    const operation = page.locator('.opblock', {
      has: page.locator('.opblock-summary-path[data-path="/staticmap/v2/coverage.json"]'),
    });
    // The key goes in through "Authorize" (the document's security schemes), as a newcomer does.
    await page.locator('.btn.authorize').first().click();
    const scheme = page.locator('.auth-container', { hasText: 'apikeyQuery' });
    await scheme.locator('input').fill(apiKey);
    await scheme.locator('button.authorize').click();
    await page.locator('.btn-done').first().click();
    await operation.locator('.opblock-summary').click();
    await operation.locator('.try-out__btn').click();
    await operation.locator('.execute').click();
    const body = operation.locator('.live-responses-table .response-col_description pre');
    await body.first().waitFor();
    const answer = JSON.parse(((await body.first().textContent()) ?? '').trim()) as {
      total: number;
      surveys: unknown[];
    };
    assert.equal(answer.total, 3, 'the three demo surveys');
  });

  test('no console errors (the CSP lets the UI style itself)', () => {
    assert.deepEqual(problems, []);
  });
});
