/** kill -9 in the middle of an ingest: no half survey visible, nothing that breaks a re-run. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { collectGarbage, RETIRED_GRACE_MS } from '../../src/storage/garbage.js';
import { testClock } from '../support/clock.js';
import {
  assetPath,
  cliArgs,
  gdalinfo,
  PROJECT_ROOT,
  REALDATA,
  run,
  SKIP_REALDATA,
  servicesFor,
  tempDir,
  writeManifest,
} from '../support/fixtures.js';

const ID = '0b7e2f4a-9c1d-4e7b-8a55-3f2d1c0b9a87';

async function entries(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

/** Starts `nadir ingest` and SIGKILLs it once it has started writing into its staging folder. */
async function killDuringIngest(manifest: string, dataDir: string): Promise<void> {
  const child = spawn(process.execPath, cliArgs('ingest', manifest), {
    cwd: PROJECT_ROOT,
    env: { ...process.env, NADIR_DATA_DIR: dataDir },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const staging = join(dataDir, 'staging');
  const deadline = Date.now() + 60_000;
  for (;;) {
    const folders = await entries(staging);
    const files = (await Promise.all(folders.map((f) => entries(join(staging, f))))).flat();
    if (files.length > 0) break;
    if (child.exitCode !== null) throw new Error('ingest finished before it could be killed: make the source larger');
    if (Date.now() > deadline) throw new Error('no staging file appeared');
    await sleep(20);
  }
  child.kill('SIGKILL');
  await exited;
}

describe('ingest survives kill -9', { skip: SKIP_REALDATA }, () => {
  let dir: { path: string; remove: () => Promise<void> };
  let dataDir: string;
  let small: string;
  let large: string;

  before(async () => {
    dir = await tempDir('crash');
    dataDir = join(dir.path, 'data');
    // Upscaled 3x so that writing its COG takes a few seconds: time to kill it in the middle.
    const big = join(dir.path, 'big.tif');
    await run('gdal_translate', [
      '-q',
      '-outsize',
      '1000%',
      '1000%',
      '-co',
      'TILED=YES',
      join(REALDATA, 'rio-tiler/pix4d_alpha_nodata.tif'),
      big,
    ]);
    small = await writeManifest(dir.path, 'small', {
      id: ID,
      captureDate: '2020-06-01',
      assets: { TrueOrtho: join(REALDATA, 'webodm/orthophoto.tif') },
    });
    large = await writeManifest(dir.path, 'large', { id: ID, captureDate: '2020-07-01', assets: { TrueOrtho: big } });
  });
  after(() => dir.remove());

  test('a killed first ingest leaves no survey, and a re-run succeeds and cleans up', async () => {
    await killDuringIngest(large, dataDir);
    const services = await servicesFor(dataDir);
    try {
      assert.equal(await services.catalogue.get(ID), undefined, 'the killed survey is not visible');
      assert.equal(await services.catalogue.count(), 0);
      assert.deepEqual(await entries(join(dataDir, 'surveys', ID)), [], 'no committed files');

      const survey = await services.ingestor.ingestManifestFile(small);
      assert.equal(survey.captureDate, '2020-06-01');
      assert.deepEqual(await entries(join(dataDir, 'staging')), [], 'the dead attempt was cleaned up');
      assert.deepEqual(await entries(join(dataDir, 'locks')), [], 'no stale lock');
    } finally {
      await services.close();
    }
  });

  test('a killed re-ingest keeps the previous version whole; the next re-ingest replaces it', async () => {
    const before = await servicesFor(dataDir);
    const v1 = await before.catalogue.get(ID);
    await before.close();
    assert.ok(v1);

    await killDuringIngest(large, dataDir);
    const clock = testClock();
    const services = await servicesFor(dataDir, clock.now);
    try {
      const still = await services.catalogue.get(ID);
      assert.equal(still?.version, v1.version, 'the old version is still the visible one');
      const cog = assetPath(services, still.assets.TrueOrtho);
      assert.ok(existsSync(cog));
      assert.equal((await gdalinfo(cog)).metadata.IMAGE_STRUCTURE?.LAYOUT, 'COG', 'its file is intact');

      const replaced = await services.ingestor.ingestManifestFile(large);
      assert.ok(replaced.version > v1.version, 'a new version number');
      assert.equal(replaced.captureDate, '2020-07-01');
      assert.equal((await services.catalogue.get(ID))?.version, replaced.version);
      // The replaced version stays readable for the grace period (servers may be reading it), the
      // killed attempt's files were never referenced; storage gc after the grace leaves only the new.
      assert.deepEqual(await entries(join(dataDir, 'surveys', ID)), [`v${v1.version}`, `v${replaced.version}`]);
      clock.advance(RETIRED_GRACE_MS);
      await collectGarbage(services.storage, services.catalogue, { now: clock.now() });
      assert.deepEqual(await entries(join(dataDir, 'surveys', ID)), [`v${replaced.version}`], 'old versions removed');
      assert.deepEqual(await entries(join(dataDir, 'staging')), []);
    } finally {
      await services.close();
    }
  });
});
