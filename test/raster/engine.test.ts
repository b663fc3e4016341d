/**
 * The engine as a server uses it: many requests at once, over budget, failing, aborted; nothing
 * may leak and the event loop must stay free while GDAL works.
 */
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import gdal from 'gdal-async';
import type { Asset, Survey } from '../../src/catalogue/survey.js';
import { isNadirError } from '../../src/errors.js';
import { IMAGE_FORMATS, RASTER_FORMATS, RasterEngine, scratchFoldersInUse } from '../../src/raster/index.js';
import { SKIP_REALDATA, tempDir } from '../support/fixtures.js';
import { ingestRealSurvey, storageIn, type TempDir } from './helpers.js';

const AOI = { lon: -89.5417, lat: 44.11881, radius: 45 };

describe('raster engine under load', { skip: SKIP_REALDATA }, () => {
  let dir: TempDir;
  let survey: Survey;
  const ortho = () => survey.assets.TrueOrtho as Asset;
  const dsm = () => survey.assets.DetailDsm as Asset;

  before(async () => {
    dir = await tempDir('raster-engine');
    survey = await ingestRealSurvey(dir.path, 'wisconsin', '2021-07-02', {
      TrueOrtho: 'fieldimager-ws5/odm_orthophoto.tif',
      DetailDsm: 'fieldimager-ws5/dsm.tif',
    });
  });
  after(() => dir.remove());

  test('beyond its budget it answers OVERLOADED with Retry-After, and recovers', async () => {
    const size = 400;
    // Room for exactly one 400 x 400 imagery render, and no waiting.
    const probe = new RasterEngine({ storage: storageIn(() => dir) });
    const engine = new RasterEngine({
      storage: storageIn(() => dir),
      admission: { budget: probe.cost('rgb', 'png', size), maxWaitMs: 0 },
    });
    const requests = Array.from({ length: 4 }, () =>
      engine.renderAoi({ asset: ortho(), aoi: AOI, size, format: 'png' }),
    );
    const results = await Promise.allSettled(requests);
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    assert.equal(ok.length, 1, 'one ran');
    assert.equal(refused.length, 3);
    for (const error of refused) {
      assert.ok(isNadirError(error) && error.code === 'OVERLOADED', String(error));
      assert.ok((error.details.retryAfter as number) >= 1);
    }
    // World files need no pixels and are never refused.
    const jgw = await Promise.all([
      engine.renderAoi({ asset: ortho(), aoi: AOI, size, format: 'jgw' }),
      engine.renderAoi({ asset: ortho(), aoi: AOI, size, format: 'png' }),
    ]);
    assert.equal(jgw[0].contentType, 'text/plain');
    // Recovered: the budget is free again and the next request runs.
    assert.equal(engine.admission.stats.inFlightCost, 0);
    const again = await engine.renderAoi({ asset: ortho(), aoi: AOI, size, format: 'png' });
    assert.ok(again.body.length > 1000);
  });

  test('a burst within the queue all succeeds, never over budget, with the same bytes as one by one', async () => {
    const size = 300;
    const probe = new RasterEngine({ storage: storageIn(() => dir) });
    const budget = 2 * probe.cost('elevation', 'png', size);
    const engine = new RasterEngine({
      storage: storageIn(() => dir),
      admission: { budget, maxWaitMs: 60_000 },
    });
    const jobs = [ortho(), dsm()].flatMap((asset) => IMAGE_FORMATS.map((format) => ({ asset, format })));
    const alone: Buffer[] = [];
    for (const job of jobs) alone.push((await engine.renderAoi({ ...job, aoi: AOI, size })).body);

    let peak = 0;
    const watch = setInterval(() => {
      peak = Math.max(peak, engine.admission.stats.inFlightCost);
    }, 1);
    const together = await Promise.all([...jobs, ...jobs].map((job) => engine.renderAoi({ ...job, aoi: AOI, size })));
    clearInterval(watch);
    assert.ok(peak > 0 && peak <= budget, `in flight peaked at ${peak} of ${budget}`);
    together.forEach((result, i) => {
      assert.ok(result.body.equals(alone[i % jobs.length] as Buffer), `job ${i} renders the same bytes concurrently`);
    });
  });

  test('aborting a queued request frees its place', async () => {
    const engine = new RasterEngine({ storage: storageIn(() => dir), admission: { budget: 1, maxWaitMs: 60_000 } });
    const running = engine.renderAoi({ asset: dsm(), aoi: AOI, size: 800, format: 'png' });
    const abort = new AbortController();
    const queued = engine.renderAoi({ asset: dsm(), aoi: AOI, size: 800, format: 'png', signal: abort.signal });
    abort.abort(new Error('client closed the connection'));
    await assert.rejects(queued, /client closed the connection/);
    await running;
    assert.deepEqual([engine.admission.stats.queued, engine.admission.stats.inFlight], [0, 0]);
  });

  test('leaves nothing in /vsimem after a thousand requests, failed ones included', async () => {
    const engine = new RasterEngine({ storage: storageIn(() => dir) });
    const vsimemBefore = await gdal.fs.readDirAsync('/vsimem').catch(() => []);
    let failures = 0;
    for (let i = 0; i < 1000; i++) {
      const asset = i % 2 ? ortho() : dsm();
      const format = RASTER_FORMATS[Math.floor(i / 2) % RASTER_FORMATS.length] as (typeof RASTER_FORMATS)[number];
      const aoi = { ...AOI, radius: 5 + (i % 90) };
      const broken = i % 97 === 0;
      const request = {
        asset: broken ? { ...asset, uri: `${asset.uri}.missing` } : asset,
        aoi,
        size: 8 + (i % 40),
        format,
      };
      try {
        await engine.renderAoi(request);
      } catch {
        failures++;
      }
    }
    assert.ok(failures > 0, 'some requests failed on purpose (missing COG)');
    assert.deepEqual(await scratchFoldersInUse(), [], 'no request folder left in /vsimem');
    assert.deepEqual(await gdal.fs.readDirAsync('/vsimem').catch(() => []), vsimemBefore);
    assert.deepEqual([engine.admission.stats.inFlight, engine.admission.stats.inFlightCost], [0, 0]);
  });

  test('keeps the event loop free while GDAL renders (2000 px DSM picture and imagery)', async (t) => {
    const engine = new RasterEngine({ storage: storageIn(() => dir) });
    // Warm up once: the first large frees of a process cost more (glibc's mmap threshold adapts).
    await engine.renderAoi({ asset: dsm(), aoi: AOI, size: 2000, format: 'png' });
    const delay = monitorEventLoopDelay({ resolution: 10 });
    let turns = 0;
    const ticker = setInterval(() => turns++, 5);
    delay.enable();
    const started = performance.now();
    await Promise.all([
      engine.renderAoi({ asset: dsm(), aoi: AOI, size: 2000, format: 'png' }),
      engine.renderAoi({ asset: ortho(), aoi: AOI, size: 2000, format: 'tif' }),
    ]);
    const elapsed = performance.now() - started;
    delay.disable();
    clearInterval(ticker);
    t.diagnostic(
      `render ${elapsed.toFixed(0)} ms; a 5 ms timer ran ${turns} times; ` +
        `event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms`,
    );
    // Synchronous rendering would hold the loop for the whole render: the timer would hardly
    // run. Asynchronous, it runs all along; a busy machine (other processes, GDAL's own threads
    // on few cores) stretches single turns, so the bound is on the count, with a wide margin.
    assert.ok(turns > elapsed / 25, `the timer ran ${turns} times in ${elapsed.toFixed(0)} ms`);
  });

  test('checks its input', async () => {
    const engine = new RasterEngine({ storage: storageIn(() => dir) });
    for (const size of [0, 5001, 2.5]) {
      await assert.rejects(engine.renderAoi({ asset: ortho(), aoi: AOI, size, format: 'tif' }), (error: unknown) => {
        assert.ok(isNadirError(error) && error.code === 'INVALID_PARAMETER' && error.details.parameter === 'size');
        return true;
      });
    }
  });
});
