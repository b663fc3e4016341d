/**
 * Two `nadir serve` processes on one PostgreSQL and one Redis, behind nginx configured by
 * deploy/nginx/nadir.conf: the scale-out configuration as docs/deploy.md describes it, with real
 * servers. A survey ingested through the CLI reaches both; a token is billed once whichever
 * server its downloads reach; a key's tile limit holds across both; stopping a server flushes
 * its counts; killing one leaves the other answering.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStores, type Stores } from '../../src/stores/open-stores.js';
import { generateTokenSecret } from '../../src/tokens/index.js';
import { tileGrid } from '../api/tiles-fixture.js';
import { testClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { REALDATA, SKIP_REALDATA, tempDir, writeManifest } from '../support/fixtures.js';
import { type NadirServer, nadirCommand, startNadirServer } from '../support/nadir-process.js';
import { deploySite } from '../support/nginx-site.js';
import {
  freePort,
  type NginxServer,
  type PostgresServer,
  type RedisServer,
  SKIP_NGINX,
  SKIP_POSTGRES,
  SKIP_REDIS,
  startNginx,
  startPostgres,
  startRedis,
} from '../support/servers.js';

const SKIP = SKIP_POSTGRES || SKIP_REDIS || SKIP_NGINX || SKIP_REALDATA;
const SURVEY_ID = '5a0d3c1e-2b4f-4e6a-8c7d-9e0f1a2b3c4d';
const POINT = { lon: -89.54165, lat: 44.11885 };

describe('two servers on PostgreSQL and Redis, behind nginx', { skip: SKIP, timeout: 300_000 }, () => {
  let postgres: PostgresServer;
  let redis: RedisServer;
  let nginx: NginxServer;
  let servers: NadirServer[];
  let stores: Stores;
  let env: NodeJS.ProcessEnv;
  let scratch: { path: string; remove: () => Promise<void> };
  let manifest: string;
  let tilePath: string;
  let ports: number[];

  async function coverageToken(base: string, apiKey: string, radius = 40): Promise<string> {
    const r = await fetch(
      `${base}/staticmap/v2/coverage.json?apikey=${apiKey}&point=${POINT.lon},${POINT.lat}&radius=${radius}&resources=TrueOrtho`,
    );
    assert.equal(r.status, 200);
    return ((await r.json()) as { transactionToken: string }).transactionToken;
  }

  function download(base: string, token: string, radius = 40): Promise<Response> {
    const query = `transactionToken=${encodeURIComponent(token)}&point=${POINT.lon},${POINT.lat}&radius=${radius}&size=32x32`;
    return fetch(`${base}/staticmap/v2/surveys/${SURVEY_ID}/TrueOrtho.png?${query}`);
  }

  before(async () => {
    [postgres, redis, scratch] = await Promise.all([startPostgres(), startRedis(), tempDir('two-servers')]);
    env = {
      NADIR_DATA_DIR: scratch.path,
      NADIR_DATABASE: await postgres.createDatabase('nadir'),
      NADIR_REDIS_URL: redis.url,
      NADIR_TOKEN_SECRETS: generateTokenSecret(),
      NADIR_LOG_LEVEL: 'info',
    };
    const migrated = await nadirCommand(env, 'migrate', '--json');
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.equal((JSON.parse(migrated.stdout) as { engine: string }).engine, 'postgres');
    stores = await openStores({ engine: 'postgres', url: env.NADIR_DATABASE as string }, testClock().now);
    manifest = await writeManifest(scratch.path, 'wisconsin', {
      id: SURVEY_ID,
      captureDate: '2021-07-02',
      assets: {
        Vert: join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif'),
        TrueOrtho: join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif'),
      },
    });
    ports = [await freePort(), await freePort()];
    servers = await Promise.all(
      ports.map((port, i) => startNadirServer({ ...env, NADIR_SERVER_ID: `server-${'ab'[i]}` }, port)),
    );
    const listen = await freePort();
    nginx = await startNginx(await deploySite(listen, ports), listen);
  });

  after(async () => {
    for (const server of servers ?? []) await server.stop('SIGKILL');
    await nginx?.stop();
    await stores?.close();
    await Promise.all([postgres?.stop(), redis?.stop()]);
    await scratch?.remove();
  });

  it('a survey ingested through the CLI is served by both within 2 s, and so is its replacement', async () => {
    const { key } = await keyFor('ingest');
    const ingested = await nadirCommand(env, 'ingest', manifest, '--json');
    assert.equal(ingested.code, 0, ingested.stderr);
    const survey = await stores.catalogue.get(SURVEY_ID);
    const vert = survey?.assets.Vert;
    assert.ok(vert);
    const { column, row } = tileGrid(vert.maxZoom);
    tilePath = `/tiles/v3/Vert/${vert.maxZoom}/${column((vert.bounds.minX + vert.bounds.maxX) / 2)}/${row((vert.bounds.minY + vert.bounds.maxY) / 2)}.png?apikey=${key}`;
    const etags = async () =>
      Promise.all(servers.map(async (s) => (await fetch(`${s.url}${tilePath}`)).headers.get('etag')));
    await eventually('both serve the new survey', async () => (await etags()).every((etag) => etag !== null));
    const [first, second] = await etags();
    assert.equal(first, second, 'the same tile, the same ETag, whichever server');

    const again = await nadirCommand(env, 'ingest', manifest, '--json');
    assert.equal(again.code, 0, again.stderr);
    const elapsed = await eventually('both serve the replacement', async () =>
      (await etags()).every((etag) => etag !== null && etag !== first),
    );
    assert.ok(elapsed <= 2_000, `${elapsed} ms`);
  });

  it('50 concurrent first downloads of one token, spread over both servers, bill one transaction', async () => {
    const { key, accountId } = await keyFor('billing', 100);
    const token = await coverageToken(servers[0]?.url as string, key);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => download((servers[i % 2] as NadirServer).url, token)),
    );
    assert.deepEqual(new Set(answers.map((r) => r.status)), new Set([200]));
    assert.equal((await stores.accounts.usage(accountId)).months[0]?.transactions, 1);
  });

  it('the monthly allowance holds exactly when 20 tokens race over both servers', async () => {
    const { key, accountId } = await keyFor('allowance', 5);
    const tokens = await Promise.all(
      Array.from({ length: 20 }, (_, i) => coverageToken(servers[i % 2]?.url as string, key, 30 + i)),
    );
    const answers = await Promise.all(
      tokens.map((token, i) => download((servers[(i + 1) % 2] as NadirServer).url, token, 30 + i)),
    );
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [...Array(5).fill(200), ...Array(15).fill(403)]);
    assert.equal((await stores.accounts.usage(accountId)).months[0]?.transactions, 5);
  });

  it('a limit of 100 tiles a minute across both refuses exactly the excess with 429', async () => {
    const { key } = await keyFor('limited', 100, 100);
    // The window is the minute of the servers' clocks: start well inside one.
    const intoMinute = (Date.now() / 1000) % 60;
    if (intoMinute > 40) await new Promise((resolve) => setTimeout(resolve, (61 - intoMinute) * 1000));
    const path = tilePath.replace(/apikey=[^&]+/, `apikey=${key}`);
    const statuses: number[] = [];
    // 10 at a time through nginx, which spreads them over both servers.
    for (let batch = 0; batch < 150 / 10; batch++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(`${nginx.url}${path}`)));
      for (const answer of answers) {
        statuses.push(answer.status);
        await answer.arrayBuffer();
      }
    }
    assert.equal(statuses.filter((s) => s === 200).length, 100);
    assert.equal(statuses.filter((s) => s === 429).length, 50);
    for (const [i, server] of servers.entries()) {
      const answered = server.lines.filter((line) => line.includes('"msg":"request"') && line.includes('/tiles/v3/'));
      assert.ok(answered.length > 0, `server ${i} answered some of them`);
      assert.ok(
        answered.every((line) => line.includes(`"server":"server-${'ab'[i]}"`)),
        'each line names its server',
      );
    }
  });

  it('SIGTERM: a server flushes its tile counts and drains before it exits; the counts of both add up', async () => {
    const { key, accountId } = await keyFor('counted');
    const path = tilePath.replace(/apikey=[^&]+/, `apikey=${key}`);
    let served = 0;
    for (let i = 0; i < 40; i++) {
      const answer = await fetch(`${(servers[i % 2] as NadirServer).url}${path}`);
      if (answer.status === 200) served++;
      await answer.arrayBuffer();
    }
    assert.equal(served, 40);
    // The flush interval is 5 s: stopping now is what writes the counts.
    const stopped = await Promise.all(servers.map((server) => server.stop('SIGTERM')));
    assert.deepEqual(stopped, [0, 0]);
    assert.equal((await stores.accounts.usage(accountId)).months[0]?.tiles, 40);
    servers = await Promise.all(
      ports.map((port, i) => startNadirServer({ ...env, NADIR_SERVER_ID: `server-${'ab'[i]}` }, port)),
    );
  });

  it('one server killed mid-load: the other keeps answering through nginx', async () => {
    const { key } = await keyFor('resilient');
    const path = tilePath.replace(/apikey=[^&]+/, `apikey=${key}`);
    const statuses: number[] = [];
    let killed = false;
    for (let batch = 0; batch < 30; batch++) {
      if (batch === 10) {
        await servers[1]?.stop('SIGKILL');
        killed = true;
      }
      const answers = await Promise.all(Array.from({ length: 8 }, () => fetch(`${nginx.url}${path}`)));
      for (const answer of answers) {
        statuses.push(answer.status);
        await answer.arrayBuffer();
      }
    }
    assert.ok(killed);
    assert.deepEqual(new Set(statuses), new Set([200]), `every request answered: ${statuses.join(',')}`);
  });

  it('a survey deleted through the CLI is gone from the remaining server within 2 s', async () => {
    const deleted = await nadirCommand(env, 'surveys', 'delete', SURVEY_ID);
    assert.equal(deleted.code, 0, deleted.stderr);
    const elapsed = await eventually(
      'the tile is gone',
      async () => (await fetch(`${servers[0]?.url}${tilePath}`)).status === 404,
    );
    assert.ok(elapsed <= 2_000);
  });

  /** An account and key made directly in the shared database. */
  async function keyFor(name: string, allowance = 100, tileRateLimit = 100_000) {
    const account = await stores.accounts.createAccount({
      name,
      rasterSubscription: true,
      monthlyAllowance: allowance,
      tileRateLimit,
      tileRateInterval: 60,
    });
    const issued = await stores.accounts.issueApiKey(account.id);
    return { key: issued.key, accountId: account.id };
  }
});
