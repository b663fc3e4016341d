/**
 * The same survey served from a local folder, from an S3-compatible bucket (s3rver, its own
 * process) and through read-only HTTP (nginx serving the folder, as a CDN would): every tile and
 * a raster download are the same bytes whichever storage they come from. A file gone from the
 * bucket, or a store that does not answer, is a 503 with a code, never a hung request; and an
 * ingest into the bucket killed in the middle leaves nothing visible.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Asset, Survey } from '../../src/catalogue/survey.js';
import { assetFiles } from '../../src/geo/asset-layout.js';
import { collectGarbage, INGEST_GRACE_MS } from '../../src/storage/garbage.js';
import { type ApiFixture, createKey, startApi } from '../api/helpers.js';
import { tileGrid } from '../api/tiles-fixture.js';
import { testClock } from '../support/clock.js';
import { cliArgs, PROJECT_ROOT, REALDATA, run, SKIP_REALDATA, tempDir, writeManifest } from '../support/fixtures.js';
import { freePort, type NginxServer, type S3Server, SKIP_NGINX, startNginx, startS3 } from '../support/servers.js';

const SURVEY_ID = '3e1c9f0a-7b2d-4c5e-9f80-1a2b3c4d5e6f';
const BROKEN_ID = '8d7c6b5a-4f3e-4d2c-8b1a-0f9e8d7c6b5a';
const DSM_AFTER_ID = '5b4a3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d';
const DSM_BEFORE_ID = '4a3b2c1d-0e9f-4b8a-9c7d-5e4f3a2b1c0d';
/** A survey first asked for while the S3 server is SIGSTOPped. */
const UNSEEN_ID = '2c1d0e9f-8a7b-4c6d-8e5f-4a3b2c1d0e9f';
/** NADIR_STORAGE_TIMEOUT_MS of the server the SIGSTOP case runs against. */
const FROZEN_TIMEOUT_MS = 1_000;
const POINT = { lon: -89.54165, lat: 44.11885 };

interface Answer {
  status: number;
  type: string | null;
  etag: string | null;
  body: Buffer;
}

/**
 * A request repeated until it is served (or 10 s pass), waiting out each 503's Retry-After (at most
 * a second): a render refused while the store was away is refused until a probe finds it back.
 */
async function untilServed(request: () => Promise<Response>): Promise<Response> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const response = await request();
    if (response.status !== 503 || performance.now() > deadline) return response;
    const body = (await response.json()) as { code: string };
    assert.equal(body.code, 'STORAGE_UNAVAILABLE');
    await sleep(Math.min(1_000, Number(response.headers.get('retry-after')) * 1_000));
  }
}

/** The status, the body read to its end (an unread body keeps the server's connection busy at close). */
async function statusOf(response: Response | Promise<Response>): Promise<number> {
  const answer = await response;
  await answer.arrayBuffer();
  return answer.status;
}

async function answerOf(response: Response): Promise<Answer> {
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    etag: response.headers.get('etag'),
    body: Buffer.from(await response.arrayBuffer()),
  };
}

describe('survey files in object storage', { skip: SKIP_REALDATA || SKIP_NGINX, timeout: 300_000 }, () => {
  let s3: S3Server;
  let nginx: NginxServer;
  let stalling: Server;
  let local: ApiFixture;
  let bucket: ApiFixture;
  let cdn: ApiFixture;
  let stalled: ApiFixture;
  let watched: ApiFixture;
  let scratch: { path: string; remove: () => Promise<void> };
  let survey: Survey;
  const keys = new Map<ApiFixture, string>();
  const clock = testClock();

  before(async () => {
    [s3, scratch] = await Promise.all([startS3('imagery'), tempDir('object-storage')]);
    local = await startApi({ now: clock.now });
    bucket = await startApi({ now: clock.now, env: { ...s3.env, NADIR_STORAGE: 's3://imagery/nadir' } });
    const manifest = await writeManifest(scratch.path, 'wisconsin', {
      id: SURVEY_ID,
      captureDate: '2021-07-02',
      assets: {
        Vert: join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif'),
        TrueOrtho: join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif'),
      },
    });
    survey = await local.services.ingestor.ingestManifestFile(manifest);
    await bucket.services.ingestor.ingestManifestFile(manifest);
    // The CDN: nginx serving the local server's data folder; a server reading through it shares that catalogue.
    const port = await freePort();
    nginx = await startNginx(`server { listen 127.0.0.1:${port}; root ${local.dir}; }`, port);
    const sameCatalogue = { NADIR_DATABASE: join(local.dir, 'nadir.sqlite') };
    cdn = await startApi({ now: clock.now, env: { ...sameCatalogue, NADIR_STORAGE: `${nginx.url}/` } });
    // A store that answers HEAD / (so the server starts) and then never answers a range request.
    stalling = createServer((request, response) => {
      if (request.method === 'HEAD') response.end();
    });
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
    const stallPort = (stalling.address() as { port: number }).port;
    stalled = await startApi({
      now: clock.now,
      env: { ...sameCatalogue, NADIR_STORAGE: `http://127.0.0.1:${stallPort}/`, NADIR_STORAGE_TIMEOUT_MS: '800' },
    });
    // The bucket's catalogue and files, with a short storage timeout (the SIGSTOP case).
    watched = await startApi({
      now: clock.now,
      env: {
        ...s3.env,
        NADIR_STORAGE: 's3://imagery/nadir',
        NADIR_DATABASE: join(bucket.dir, 'nadir.sqlite'),
        NADIR_STORAGE_TIMEOUT_MS: String(FROZEN_TIMEOUT_MS),
      },
    });
    // cdn and stalled share the local server's database, watched the bucket's: one account each, named apart.
    for (const [i, api] of [local, bucket, cdn, stalled, watched].entries()) {
      keys.set(api, (await createKey(api.services, `storage-${i}`)).key);
    }
  });

  after(async () => {
    for (const api of [local, bucket, cdn, stalled, watched]) await api?.close();
    stalling?.closeAllConnections();
    stalling?.close();
    await nginx?.stop();
    await s3?.stop();
    await scratch?.remove();
  });

  function tile(api: ApiFixture, path: string): Promise<Answer> {
    return api.get(`${path}?apikey=${keys.get(api)}`).then(answerOf);
  }

  it('the catalogue records storage keys, and the bucket holds the COGs under them', async () => {
    const vert = survey.assets.Vert?.uri ?? '';
    assert.match(vert, new RegExp(`^surveys/${SURVEY_ID}/v1/Vert\\.tif$`));
    const listed = [];
    for await (const object of bucket.services.storage.list('surveys/')) listed.push(object.key);
    assert.deepEqual(listed.sort(), [`surveys/${SURVEY_ID}/v1/TrueOrtho.tif`, `surveys/${SURVEY_ID}/v1/Vert.tif`]);
  });

  it('every tile of the survey at three zooms is the same bytes from the folder, the bucket and the CDN', async () => {
    const vert = survey.assets.Vert;
    assert.ok(vert);
    let passThrough = 0;
    let composite = 0;
    for (const z of [vert.maxZoom, vert.maxZoom - 1, vert.maxZoom - 2]) {
      const { column, row } = tileGrid(z);
      for (let y = row(vert.bounds.maxY); y <= row(vert.bounds.minY); y++) {
        for (let x = column(vert.bounds.minX); x <= column(vert.bounds.maxX); x++) {
          const path = `/tiles/v3/Vert/${z}/${x}/${y}.img`;
          const response = await local.get(`${path}?apikey=${keys.get(local)}`);
          const timing = response.headers.get('server-timing') ?? '';
          const expected = await answerOf(response);
          if (expected.status !== 200) continue;
          if (/passthrough/.test(timing)) passThrough++;
          else composite++;
          for (const api of [bucket, cdn]) {
            const got = await tile(api, path);
            assert.equal(got.status, 200, `${path} from ${api === bucket ? 'the bucket' : 'the CDN'}`);
            assert.equal(got.type, expected.type);
            assert.ok(got.body.equals(expected.body), `${path}: the same bytes`);
          }
        }
      }
    }
    assert.ok(passThrough > 0 && composite > 0, `both kinds drawn: ${passThrough} stored, ${composite} composed`);
  });

  it('a raster download is the same file from the folder, the bucket and the CDN (GDAL reads /vsis3/, /vsicurl/)', async () => {
    const download = async (api: ApiFixture, format: string) => {
      const coverage = await api.get(
        `/staticmap/v2/coverage.json?apikey=${keys.get(api)}&point=${POINT.lon},${POINT.lat}&radius=40&resources=TrueOrtho`,
      );
      const token = ((await coverage.json()) as { transactionToken: string }).transactionToken;
      return answerOf(
        await api.get(
          `/staticmap/v2/surveys/${SURVEY_ID}/TrueOrtho.${format}?transactionToken=${encodeURIComponent(token)}&point=${POINT.lon},${POINT.lat}&radius=40&size=300x300`,
        ),
      );
    };
    for (const format of ['tif', 'png']) {
      const expected = await download(local, format);
      assert.equal(expected.status, 200);
      for (const api of [bucket, cdn]) {
        const got = await download(api, format);
        assert.equal(got.status, 200);
        assert.ok(got.body.equals(expected.body), `TrueOrtho.${format}: the same bytes`);
      }
    }
  });

  it('a file missing from the bucket is 503 STORAGE_UNAVAILABLE with Retry-After, for tiles and rasters', async () => {
    const manifest = await writeManifest(scratch.path, 'broken', {
      id: BROKEN_ID,
      captureDate: '2021-07-03',
      assets: { Vert: join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif') },
    });
    const broken = await bucket.services.ingestor.ingestManifestFile(manifest);
    const vert = broken.assets.Vert;
    assert.ok(vert);
    await bucket.services.storage.delete([vert.uri]);
    const { column, row } = tileGrid(vert.maxZoom);
    const x = column((vert.bounds.minX + vert.bounds.maxX) / 2);
    const y = row((vert.bounds.minY + vert.bounds.maxY) / 2);
    const response = await bucket.get(
      `/tiles/v3/surveys/${BROKEN_ID}/Vert/${vert.maxZoom}/${x}/${y}.jpg?apikey=${keys.get(bucket)}`,
    );
    assert.equal(response.status, 503);
    assert.ok(Number(response.headers.get('retry-after')) >= 1);
    const body = (await response.json()) as { code: string; error: string };
    assert.equal(body.code, 'STORAGE_UNAVAILABLE');
    assert.ok(!body.error.includes('imagery') && !body.error.includes('surveys/'), 'no bucket or key in the answer');
    assert.ok(
      bucket.logs.some((line) => line.includes('STORAGE_UNAVAILABLE') && line.includes(vert.uri)),
      'the log says which',
    );
  });

  it('a store that does not answer is a 503 after its time-out, not a hung request, for tiles and rasters', async () => {
    const vert = survey.assets.Vert;
    assert.ok(vert);
    const { column, row } = tileGrid(vert.maxZoom);
    const started = performance.now();
    const response = await stalled.get(
      `/tiles/v3/Vert/${vert.maxZoom}/${column((vert.bounds.minX + vert.bounds.maxX) / 2)}/${row((vert.bounds.minY + vert.bounds.maxY) / 2)}.jpg?apikey=${keys.get(stalled)}`,
    );
    const elapsed = performance.now() - started;
    assert.equal(response.status, 503);
    assert.equal(((await response.json()) as { code: string }).code, 'STORAGE_UNAVAILABLE');
    assert.ok(elapsed < 5_000, `answered in ${Math.round(elapsed)} ms`);
    // A raster too: GDAL's open waits on a range that never comes; the watch's probe (a range of
    // the same file) does not get one either, and the download is a 503 after about the 800 ms.
    const coverage = await stalled.get(
      `/staticmap/v2/coverage.json?apikey=${keys.get(stalled)}&point=${POINT.lon},${POINT.lat}&radius=40&resources=TrueOrtho`,
    );
    const token = ((await coverage.json()) as { transactionToken: string }).transactionToken;
    const rasterStarted = performance.now();
    const raster = await stalled.get(
      `/staticmap/v2/surveys/${SURVEY_ID}/TrueOrtho.png?transactionToken=${encodeURIComponent(token)}&point=${POINT.lon},${POINT.lat}&radius=40&size=300x300`,
    );
    const rasterElapsed = performance.now() - rasterStarted;
    assert.equal(raster.status, 503);
    assert.equal(((await raster.json()) as { code: string }).code, 'STORAGE_UNAVAILABLE');
    assert.ok(rasterElapsed < 2_000, `the raster answered in ${Math.round(rasterElapsed)} ms`);
  });

  it('the S3 server killed: a raster read mid-way is 503 STORAGE_UNAVAILABLE, /ready names the storage; back when it is', async () => {
    const api = bucket;
    const download = async (radius: number) => {
      const coverage = await api.get(
        `/staticmap/v2/coverage.json?apikey=${keys.get(api)}&point=${POINT.lon},${POINT.lat}&radius=${radius}&resources=Vert`,
      );
      const token = ((await coverage.json()) as { transactionToken: string }).transactionToken;
      return api.get(
        `/staticmap/v2/surveys/${SURVEY_ID}/Vert.png?transactionToken=${encodeURIComponent(token)}&point=${POINT.lon},${POINT.lat}&radius=${radius}&size=200x200`,
      );
    };
    // GDAL has the file open before (its header cached): the outage meets it in the pixels' reads.
    assert.equal(await statusOf(download(10)), 200);
    await s3.halt();
    try {
      const response = await download(45);
      const body = (await response.json()) as { code: string };
      assert.equal(response.status, 503, JSON.stringify(body));
      assert.equal(body.code, 'STORAGE_UNAVAILABLE');
      assert.ok(Number(response.headers.get('retry-after')) >= 1);
      const ready = await api.get('/ready');
      assert.equal(ready.status, 503);
      assert.equal(((await ready.json()) as { engines: { storage: string } }).engines.storage, 'down');
    } finally {
      await s3.restart();
    }
    // Back without a restart: at once, or after the Retry-After of a render refused just before.
    assert.equal(await statusOf(untilServed(() => download(46))), 200);
    assert.equal(await statusOf(api.get('/ready')), 200);
    assert.ok(!api.logs.some((line) => line.includes('"statusCode":500')), 'no 500 logged');
  });

  it('the S3 server SIGSTOPped: imagery and DsmChange are 503 STORAGE_UNAVAILABLE within about the storage timeout; GDAL keeps its permits until its reads end; back when it thaws', async (t) => {
    const dsm = join(REALDATA, 'fieldimager-ws5/dsm.tif');
    const ortho = join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif');
    for (const [id, captureDate, assets] of [
      [DSM_BEFORE_ID, '2021-06-01', { DetailDsm: dsm }],
      [DSM_AFTER_ID, '2021-07-01', { DetailDsm: dsm }],
      [UNSEEN_ID, '2021-07-05', { TrueOrtho: ortho }],
    ] as const) {
      await bucket.services.ingestor.ingestManifestFile(
        await writeManifest(scratch.path, `frozen-${id}`, { id, captureDate, assets }),
      );
    }
    const api = watched;
    const raster = api.services.raster;
    const token = async (resources: string, radius: number) => {
      const coverage = await api.get(
        `/staticmap/v2/coverage.json?apikey=${keys.get(api)}&point=${POINT.lon},${POINT.lat}&radius=${radius}&resources=${resources}`,
      );
      return encodeURIComponent(((await coverage.json()) as { transactionToken: string }).transactionToken);
    };
    const area = (radius: number, size: number) =>
      `point=${POINT.lon},${POINT.lat}&radius=${radius}&size=${size}x${size}`;
    const imagery = async (format: string, radius: number, size = 300, id = SURVEY_ID) => {
      const query = `transactionToken=${await token('TrueOrtho', radius)}&${area(radius, size)}`;
      return () => api.get(`/staticmap/v2/surveys/${id}/TrueOrtho.${format}?${query}`);
    };
    const change = async (format: string, radius: number, size = 300) => {
      const query = `transactionToken=${await token('DetailDsm', radius)}&${area(radius, size)}&baseline=${DSM_BEFORE_ID}`;
      return () => api.get(`/staticmap/v2/surveys/${DSM_AFTER_ID}/DsmChange.${format}?${query}`);
    };
    // Served before: GDAL has opened the files and cached their headers.
    assert.equal(await statusOf((await imagery('png', 10))()), 200);
    assert.equal(await statusOf((await change('tif', 10))()), 200);
    const during = [
      await imagery('png', 45, 400),
      await imagery('tif', 44),
      await change('png', 40),
      await change('json', 41),
      // GDAL opens this file for the first time while the store does not answer.
      await imagery('jpg', 35, 300, UNSEEN_ID),
    ];
    const later = await Promise.all([imagery('jpg', 43), change('tif', 42), imagery('png', 39), change('png', 38)]);

    s3.freeze();
    try {
      const timed = async (request: () => Promise<Response>) => {
        const started = performance.now();
        const response = await request();
        const body = (await response.json()) as { code: string };
        return { response, body, ms: performance.now() - started };
      };
      const answers = await Promise.all(during.map(timed));
      for (const { response, body, ms } of answers) {
        assert.equal(response.status, 503, JSON.stringify(body));
        assert.equal(body.code, 'STORAGE_UNAVAILABLE');
        assert.ok(Number(response.headers.get('retry-after')) >= 1);
        // The timeout, the probe interval before it, and room for a loaded machine; GDAL alone took 11 s at 2 s.
        assert.ok(ms < FROZEN_TIMEOUT_MS * 2, `answered in ${Math.round(ms)} ms, timeout ${FROZEN_TIMEOUT_MS} ms`);
      }
      t.diagnostic(`SIGSTOP: answered in ${answers.map(({ ms }) => Math.round(ms)).join(', ')} ms`);
      // GDAL's reads are still waiting on the frozen store: their memory stays accounted for.
      assert.ok(raster.admission.stats.inFlight >= 1, 'the GDAL work still holds its admission permits');
      // Later requests are refused at once; at most one at a time waits for a probe.
      const refused = [];
      for (const request of later) refused.push(await timed(request));
      for (const { response, body } of refused) {
        assert.equal(response.status, 503, JSON.stringify(body));
        assert.equal(body.code, 'STORAGE_UNAVAILABLE');
      }
      assert.ok(
        refused.filter(({ ms }) => ms > FROZEN_TIMEOUT_MS / 2).length <= 1,
        `refused in ${refused.map(({ ms }) => Math.round(ms)).join(', ')} ms`,
      );
      // GDAL's own reads time out in the end (GDAL_HTTP_TIMEOUT, one retry): its threads and permits
      // come back while the store is still frozen, and libuv's pool serves others again.
      const waitStarted = performance.now();
      const deadline = performance.now() + 30_000;
      while (raster.admission.stats.inFlight > 0) {
        assert.ok(performance.now() < deadline, `GDAL still holds ${raster.admission.stats.inFlight} renders`);
        await sleep(100);
      }
      t.diagnostic(
        `SIGSTOP: later ones in ${refused.map(({ ms }) => Math.round(ms)).join(', ')} ms; GDAL's work ended ${Math.round(performance.now() - waitStarted)} ms after the answers`,
      );
      const vert = survey.assets.Vert as Asset;
      const { column, row } = tileGrid(vert.maxZoom);
      const started = performance.now();
      const localTile = await tile(
        local,
        `/tiles/v3/Vert/${vert.maxZoom}/${column((vert.bounds.minX + vert.bounds.maxX) / 2)}/${row((vert.bounds.minY + vert.bounds.maxY) / 2)}.jpg`,
      );
      assert.equal(localTile.status, 200);
      assert.ok(performance.now() - started < 1_000, 'the pool is free');
    } finally {
      s3.thaw();
    }
    // Back without a restart, for the file GDAL first met during the outage too (it remembered it
    // as missing: the engine makes it forget).
    assert.equal(await statusOf(untilServed(await imagery('png', 37))), 200);
    assert.equal(await statusOf(untilServed(await imagery('jpg', 34, 300, UNSEEN_ID))), 200);
    assert.equal(await statusOf(untilServed(await change('png', 36))), 200);
    assert.equal(raster.storageWatch?.state, 'up');
    assert.ok(!api.logs.some((line) => line.includes('"statusCode":500')), 'no 500 logged');
    assert.ok(
      // The watch's own probe timeout, or the storage client's, whichever ran out first.
      api.logs.some(
        (line) => line.includes('STORAGE_UNAVAILABLE') && /did not answer (a 1-byte read|within)/.test(line),
      ),
      'the log says why',
    );
  });

  it('an ingest into the bucket killed in the middle leaves nothing visible; a re-run completes; gc clears the rest', async () => {
    const id = '6f5e4d3c-2b1a-4f0e-9d8c-7b6a5f4e3d2c';
    const big = join(scratch.path, 'big.tif');
    await run('gdal_translate', [
      '-q',
      '-outsize',
      '800%',
      '800%',
      '-co',
      'TILED=YES',
      join(REALDATA, 'rio-tiler/pix4d_alpha_nodata.tif'),
      big,
    ]);
    const manifest = await writeManifest(scratch.path, 'big', {
      id,
      captureDate: '2020-07-01',
      assets: { TrueOrtho: big },
    });
    const env = { ...process.env, ...s3.env, NADIR_DATA_DIR: bucket.dir, NADIR_STORAGE: 's3://imagery/nadir' };
    // Killed once its version is reserved (its staging folder exists), then later and later:
    // fixed delays from the start would depend on how loaded the machine is.
    for (const delay of [0, 1_200, 2_700]) {
      const child = spawn(process.execPath, cliArgs('ingest', manifest), { cwd: PROJECT_ROOT, env, stdio: 'ignore' });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const deadline = performance.now() + 60_000;
      // The survey's own staging folder (a re-run of the same files resumes from it).
      while (!(await readdir(join(bucket.dir, 'staging', id)).catch((): string[] => [])).includes('ingest.json')) {
        assert.equal(child.exitCode, null, 'the ingest was still running when it was to be killed');
        assert.ok(performance.now() < deadline, 'no staging folder appeared');
        await sleep(20);
      }
      await sleep(delay);
      child.kill('SIGKILL');
      await exited;
      assert.equal(await bucket.services.catalogue.get(id), undefined, `killed after ${delay} ms: nothing visible`);
    }
    const ingested = await bucket.services.ingestor.ingestManifestFile(manifest);
    // The same files: the re-run resumes under the version the killed attempts reserved.
    assert.ok(ingested.version >= 1);
    assert.equal((await bucket.services.catalogue.get(id))?.version, ingested.version);
    assert.deepEqual(await readdir(join(bucket.dir, 'staging')), [], 'the killed attempts left no staging behind');
    clock.advance(INGEST_GRACE_MS);
    await collectGarbage(bucket.services.storage, bucket.services.catalogue, { now: clock.now() });
    const left = [];
    for await (const object of bucket.services.storage.list(`surveys/${id}/`)) left.push(object.key);
    const committed = assetFiles(ingested.assets.TrueOrtho as Asset);
    assert.deepEqual(left.sort(), committed.sort(), 'only the committed version is left');
    assert.ok(committed.every((key) => key.startsWith(`surveys/${id}/v${ingested.version}/`)));
  });
});
