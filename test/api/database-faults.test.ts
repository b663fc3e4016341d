/**
 * A server on a real PostgreSQL while the database goes away (issue 32, item 1): stopped at once
 * (`pg_ctl stop -m immediate`), then hung (SIGSTOP to the server and its backends). Every endpoint
 * that needs it answers 503 DATABASE_UNAVAILABLE with Retry-After within its timeout, never a 500,
 * never a hang; a key verified before keeps working where nothing else needs the database; and
 * the server recovers by itself when the database is back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { multiPolygonBounds } from '../../src/geo/polygon.js';
import { type PostgresServer, SKIP_POSTGRES, startPostgres } from '../support/servers.js';
import { type ApiFixture, createKey, realdataMissing, startApi } from './helpers.js';
import { ingestRealdataSurvey, tileGrid } from './tiles-fixture.js';

/** NADIR_DATABASE_TIMEOUT_MS here: an answer may take this, plus the time to make it. */
const TIMEOUT_MS = 1_000;
const SLACK_MS = 1_500;

describe('a server whose PostgreSQL stops or hangs', { skip: SKIP_POSTGRES }, () => {
  let pg: PostgresServer;
  let api: ApiFixture;
  let key: string;
  let place = 0;

  /** Endpoints that read the catalogue or the accounts; each call a new place, so no cache answers. */
  function requests(apikey: string): string[] {
    place++;
    const lon = -85.4 + place * 0.01;
    const k = `apikey=${apikey}`;
    return [
      `/staticmap/v2/coverage.json?point=${lon},29.9&radius=50&resources=Vert&${k}`,
      `/stac/v1/search?bbox=${lon},29.8,${lon + 0.005},29.9&${k}`,
      `/stac/v1/collections?${k}`,
      `/tiles/v3/Vert/tilejson.json?${k}`,
      `/wmts/1.0.0/WMTSCapabilities.xml?${k}`,
    ];
  }

  async function timed(path: string): Promise<{ status: number; ms: number; body: string; retryAfter: string | null }> {
    const started = performance.now();
    const response = await api.get(path);
    const body = await response.text();
    return {
      status: response.status,
      ms: performance.now() - started,
      body,
      retryAfter: response.headers.get('retry-after'),
    };
  }

  /** Every answer a 503 DATABASE_UNAVAILABLE with Retry-After, within the timeout. */
  async function allUnavailable(apikey: string, what: string): Promise<number[]> {
    const answers = await Promise.all(requests(apikey).map(timed));
    for (const [i, answer] of answers.entries()) {
      const where = `${what}: ${requests('KEY')[i]?.split('?')[0]}`;
      assert.equal(answer.status, 503, `${where} answered ${answer.status} ${answer.body.slice(0, 200)}`);
      assert.equal(JSON.parse(answer.body).code, 'DATABASE_UNAVAILABLE', where);
      assert.match(answer.retryAfter ?? '', /^[1-9]\d*$/, `${where}: Retry-After`);
      assert.ok(answer.ms < TIMEOUT_MS + SLACK_MS, `${where} took ${answer.ms.toFixed(0)} ms`);
    }
    return answers.map((a) => a.ms);
  }

  async function recovered(apikey: string): Promise<void> {
    const deadline = performance.now() + 15_000;
    for (;;) {
      const answers = await Promise.all(requests(apikey).map(timed));
      if (answers.every((a) => a.status === 200)) return;
      assert.ok(
        answers.every((a) => a.status === 200 || a.status === 503),
        `while recovering: ${answers.map((a) => a.status)}`,
      );
      assert.ok(performance.now() < deadline, `not recovered: ${answers.map((a) => a.status)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  before(async () => {
    pg = await startPostgres();
    api = await startApi({
      env: {
        NADIR_DATABASE: await pg.createDatabase('faults'),
        NADIR_DATABASE_TIMEOUT_MS: String(TIMEOUT_MS),
        NADIR_TOKEN_SECRETS: `k1:${'B'.repeat(43)}=`,
      },
    });
    key = (await createKey(api.services, 'faults')).key;
  });
  after(async () => {
    await api?.close();
    await pg?.stop();
  });

  test('stopped: 503 with Retry-After at once, a verified key still verified, back when it restarts', async () => {
    await recovered(key); // every endpoint answers, and the key is verified and remembered
    const unknown = (await createKey(api.services, 'unverified')).key;
    // The test server runs without synchronous commits: made durable before the crash it survives.
    await pg.psql('faults', 'CHECKPOINT');
    await pg.halt();
    try {
      const first = await allUnavailable(key, 'stopped');
      // Once the breaker is open nothing waits for the database at all.
      const then = await allUnavailable(key, 'stopped, breaker open');
      assert.ok(Math.max(...then) < 500, `with the breaker open: ${then.map((ms) => ms.toFixed(0))} ms`);
      assert.ok(first.length > 0);
      // A key never verified cannot be checked: 503, not 401.
      const answer = await timed(`/stac/v1/collections?apikey=${unknown}`);
      assert.equal(answer.status, 503);
    } finally {
      await pg.restart();
    }
    await recovered(key);
    assert.equal((await timed(`/stac/v1/collections?apikey=${unknown}`)).status, 200);
  });

  test('hung (SIGSTOP): 503 within the timeout, never a hang; back after SIGCONT', async () => {
    await recovered(key);
    await pg.freeze();
    try {
      const first = await allUnavailable(key, 'hung');
      assert.ok(Math.max(...first) >= TIMEOUT_MS * 0.8, `the first answers waited for the timeout: ${first}`);
      const then = await allUnavailable(key, 'hung, breaker open');
      assert.ok(Math.max(...then) < 500, `with the breaker open: ${then.map((ms) => ms.toFixed(0))} ms`);
    } finally {
      await pg.thaw();
    }
    await recovered(key);
  });

  test('imagery and tiles: 503 before any billing while stopped, billed exactly once after', {
    skip: realdataMissing,
  }, async () => {
    const { account, key: own } = await createKey(api.services, 'imagery-faults');
    const survey = await ingestRealdataSurvey(api.services, api.dir, 'webodm/orthophoto.tif', {
      id: '7c1e5b2a-4d3f-4a6e-9b8c-0f1e2d3c4b5a',
      captureDate: '2025-06-01',
    });
    const box = multiPolygonBounds(survey.footprint);
    const lon = (box.minX + box.maxX) / 2;
    const lat = (box.minY + box.maxY) / 2;
    const coverage = await api.get(
      `/staticmap/v2/coverage.json?apikey=${own}&point=${lon},${lat}&radius=30&resources=Vert`,
    );
    assert.equal(coverage.status, 200);
    const token = ((await coverage.json()) as { transactionToken: string }).transactionToken;
    const download = `/staticmap/v2/surveys/${survey.id}/Vert.tif?transactionToken=${encodeURIComponent(token)}&point=${lon},${lat}&radius=30&size=64x64`;
    const asset = survey.assets.Vert;
    assert.ok(asset);
    const z = asset.maxZoom - 1;
    const grid = tileGrid(z);
    const tile = `${z}/${grid.column((asset.bounds.minX + asset.bounds.maxX) / 2)}/${grid.row((asset.bounds.minY + asset.bounds.maxY) / 2)}.jpg`;
    await pg.psql('faults', 'CHECKPOINT');
    await pg.halt();
    try {
      for (const path of [download, download]) {
        const answer = await timed(path);
        assert.equal(answer.status, 503, `imagery while stopped: ${answer.status} ${answer.body.slice(0, 200)}`);
        assert.equal(JSON.parse(answer.body).code, 'DATABASE_UNAVAILABLE');
        assert.match(answer.retryAfter ?? '', /^[1-9]\d*$/);
        assert.ok(answer.ms < TIMEOUT_MS + SLACK_MS, `imagery took ${answer.ms.toFixed(0)} ms`);
      }
      // Tiles need the catalogue only for places not yet remembered: a 200 or a 503, never a 500.
      for (const path of [
        `/tiles/v3/Vert/${tile}?apikey=${own}`,
        `/tiles/v3/surveys/${survey.id}/Vert/${tile}?apikey=${own}`,
      ]) {
        const answer = await timed(path);
        assert.ok([200, 503].includes(answer.status), `${path}: ${answer.status} ${answer.body.slice(0, 200)}`);
        if (answer.status === 503) assert.match(answer.retryAfter ?? '', /^[1-9]\d*$/);
        assert.ok(answer.ms < TIMEOUT_MS + SLACK_MS, `${path} took ${answer.ms.toFixed(0)} ms`);
      }
    } finally {
      await pg.restart();
    }
    await recovered(key);
    for (let i = 0; i < 2; i++)
      assert.equal((await api.get(download)).status, 200, 'downloads once the database is back');
    const usage = await api.services.accounts.usage(account.id);
    assert.equal(
      usage.months.reduce((sum, m) => sum + m.transactions, 0),
      1,
      'the failed attempts billed nothing; the two downloads one transaction',
    );
  });

  test('no answer was a 500, and the outage is logged with its cause', () => {
    assert.deepEqual(
      api.logs.filter((line) => line.includes('"statusCode":500')),
      [],
    );
    assert.ok(api.logs.some((line) => line.includes('PostgreSQL unavailable')));
    assert.ok(api.logs.some((line) => line.includes('PostgreSQL reachable again')));
  });
});
