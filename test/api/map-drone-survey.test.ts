/**
 * A drone survey on the map page (issue 34, item 4): a survey with only TrueOrtho and DetailDsm
 * (the Wisconsin pair of ../shared/realdata), ingested by `nadir ingest` into a server of its own,
 * shows as its TrueOrtho at the centre, in Chromium, where the page said "No imagery at the
 * centre" when it knew only Vert.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { REALDATA, tempDir, writeManifest } from '../support/fixtures.js';
import { type NadirServer, nadirCommand, startNadirServer } from '../support/nadir-process.js';
import { noteSecret } from '../support/secret-watch.js';
import { freePort } from '../support/servers.js';
import { realdataMissing } from './helpers.js';
import { type MapBrowser, openMapBrowser, skipBrowser } from './map-browser.js';

const ID = '7a1e0c55-4d2b-4f0e-9c1a-3b5d7e9f1a02';

describe('a TrueOrtho and DetailDsm survey on the map page', {
  skip: skipBrowser || realdataMissing,
  timeout: 180_000,
}, () => {
  let scratch: Awaited<ReturnType<typeof tempDir>>;
  let server: NadirServer;
  let chrome: MapBrowser;
  let key: string;

  before(async () => {
    scratch = await tempDir('map-drone');
    const env = { NADIR_DATA_DIR: scratch.path, NADIR_LOG_LEVEL: 'warn' };
    const manifest = await writeManifest(scratch.path, ID, {
      id: ID,
      captureDate: '2024-06-01',
      firstPhotoTime: '2024-06-01T15:00:00Z',
      lastPhotoTime: '2024-06-01T16:00:00Z',
      tags: [],
      assets: {
        TrueOrtho: join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif'),
        DetailDsm: join(REALDATA, 'fieldimager-ws5/dsm.tif'),
      },
    });
    const ingested = await nadirCommand(env, 'ingest', manifest);
    assert.equal(ingested.code, 0, ingested.stderr);
    const created = await nadirCommand(env, 'accounts', 'create', '--name', 'drone', '--raster', '--json');
    assert.equal(created.code, 0, created.stderr);
    const { apiKey } = JSON.parse(created.stdout) as { apiKey: string };
    noteSecret(apiKey);
    key = apiKey;
    server = await startNadirServer(env, await freePort());
    chrome = await openMapBrowser(apiKey);
  });
  after(async () => {
    await chrome?.close();
    await server?.stop();
    await scratch?.remove();
  });

  test('opened on Vert at the survey, the page shows its TrueOrtho and names it', async () => {
    await chrome.open(server.url, '#19/44.118800/-89.541700/Vert');
    await chrome.page.fill('#apikey', key);
    await chrome.page.press('#apikey', 'Enter');
    await chrome.until("document.getElementById('map').dataset.layer === 'TrueOrtho'");
    await chrome.tilesLoaded('TrueOrtho');
    await chrome.until("document.getElementById('on-screen').textContent.includes('2024-06-01')");
    const shown = await chrome.shownTiles();
    assert.ok(
      shown.some(([src]) => src.includes('/tiles/v3/TrueOrtho/')),
      `TrueOrtho tiles on the map: ${await chrome.describe()}`,
    );
    assert.match(await chrome.page.locator('#layer').inputValue(), /^TrueOrtho$/);
    assert.match(chrome.page.url(), /\/TrueOrtho$/, 'the hash names the layer shown');
  });
});
