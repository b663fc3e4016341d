/**
 * The monitoring of docs/operations.md with the real thing (issue 36, item 4): Debian's Prometheus,
 * configured by deploy/prometheus/prometheus.yml and alerts.yml as shipped, scrapes two `nadir
 * serve` processes (on PostgreSQL and Redis, behind nginx configured by deploy/nginx/nadir.conf;
 * one of them runs two workers and is scraped once) and an ingest `nadir worker`. Its HTTP API
 * says what an operator would see: N tiles requested through nginx are N, a stopped server is
 * down, a stopped engine (PostgreSQL) is down, the alert rules load (and pass `promtool check
 * rules`), and every query of deploy/grafana's dashboard runs and names only exported metrics.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { LOCATION_TILE_PATH } from '../../src/api/tiles/tile-route.js';
import { openStores, type Stores } from '../../src/stores/open-stores.js';
import { generateTokenSecret } from '../../src/tokens/index.js';
import { tileGrid } from '../api/tiles-fixture.js';
import { testClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { PROJECT_ROOT, REALDATA, SKIP_REALDATA, tempDir, writeManifest } from '../support/fixtures.js';
import { type NadirServer, nadirCommand, startNadirServer } from '../support/nadir-process.js';
import { deploySite } from '../support/nginx-site.js';
import {
  deployedPrometheusConfig,
  PROMETHEUS_DEPLOY,
  type PrometheusServer,
  SKIP_PROMETHEUS,
  startPrometheus,
} from '../support/prometheus.js';
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

const run = promisify(execFile);
const SKIP = SKIP_PROMETHEUS || SKIP_POSTGRES || SKIP_REDIS || SKIP_NGINX || SKIP_REALDATA;
const SURVEY_ID = '8d4e2f1a-3c5b-4a7d-9e0f-1b2c3d4e5f60';
/** Prometheus scrapes every second (deployedPrometheusConfig): a few scrapes' time. */
const SCRAPED_WITHIN_MS = 15_000;

describe('Prometheus scraping two servers behind nginx', { skip: SKIP, timeout: 240_000 }, () => {
  let postgres: PostgresServer;
  let redis: RedisServer;
  let nginx: NginxServer;
  let prometheus: PrometheusServer;
  let servers: NadirServer[] = [];
  let stores: Stores;
  let scratch: { path: string; remove: () => Promise<void> };
  let targets: string[];
  let ingestWorker: ChildProcess | undefined;
  let tilePath: string;

  /** The one value of an instant query, undefined while it has no series. */
  async function single(expression: string): Promise<number | undefined> {
    const samples = await prometheus.query(expression);
    return samples.length === 1 ? samples[0]?.value : undefined;
  }

  before(async () => {
    [postgres, redis, scratch] = await Promise.all([startPostgres(), startRedis(), tempDir('prometheus')]);
    const env: NodeJS.ProcessEnv = {
      NADIR_DATA_DIR: scratch.path,
      NADIR_DATABASE: await postgres.createDatabase('nadir'),
      NADIR_REDIS_URL: redis.url,
      NADIR_TOKEN_SECRETS: generateTokenSecret(),
      NADIR_LOG_LEVEL: 'warn',
    };
    const migrated = await nadirCommand(env, 'migrate');
    assert.equal(migrated.code, 0, migrated.stderr);
    const manifest = await writeManifest(scratch.path, 'wisconsin', {
      id: SURVEY_ID,
      captureDate: '2021-07-02',
      assets: { Vert: join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif') },
    });
    const ingested = await nadirCommand(env, 'ingest', manifest);
    assert.equal(ingested.code, 0, ingested.stderr);
    stores = await openStores({ engine: 'postgres', url: env.NADIR_DATABASE as string }, testClock().now);
    const account = await stores.accounts.createAccount({
      name: 'prometheus',
      rasterSubscription: true,
      monthlyAllowance: 100,
      tileRateLimit: 100_000,
      tileRateInterval: 60,
    });
    const { key } = await stores.accounts.issueApiKey(account.id);
    const vert = (await stores.catalogue.get(SURVEY_ID))?.assets.Vert;
    assert.ok(vert);
    const { column, row } = tileGrid(vert.maxZoom);
    const { minX, minY, maxX, maxY } = vert.bounds;
    tilePath = `/tiles/v3/Vert/${vert.maxZoom}/${column((minX + maxX) / 2)}/${row((minY + maxY) / 2)}.jpg?apikey=${key}`;

    const ports = [await freePort(), await freePort()];
    const metricsPorts = [await freePort(), await freePort()];
    targets = metricsPorts.map((port) => `127.0.0.1:${port}`);
    servers = await Promise.all(
      ports.map((port, i) =>
        startNadirServer(
          {
            ...env,
            NADIR_SERVER_ID: `server-${'ab'[i]}`,
            NADIR_METRICS_PORT: String(metricsPorts[i]),
            NADIR_METRICS_HOST: '127.0.0.1',
            // The second server runs two worker processes, scraped as one target.
            NADIR_WORKERS: String(i + 1),
          },
          port,
        ),
      ),
    );
    const listen = await freePort();
    nginx = await startNginx(await deploySite(listen, ports), listen);
    const workerMetrics = await freePort();
    ingestWorker = spawn(process.execPath, [join(PROJECT_ROOT, 'bin/nadir'), 'worker'], {
      env: { ...process.env, ...env, NADIR_METRICS_PORT: String(workerMetrics), NADIR_METRICS_HOST: '127.0.0.1' },
      stdio: 'ignore',
    });
    prometheus = await startPrometheus(
      await deployedPrometheusConfig({ nadir: targets, 'nadir-worker': [`127.0.0.1:${workerMetrics}`] }),
    );
  });

  after(async () => {
    await prometheus?.stop();
    // Each process must stop by itself after PostgreSQL's restart (the last test): a server and
    // the worker once hung here, held by a pool connection re-opened after closing (postgres.ts).
    const exits: Record<string, number | null | undefined> = {};
    if (ingestWorker && ingestWorker.exitCode === null) {
      const exited = new Promise<number | null>((resolve) => ingestWorker?.once('exit', resolve));
      ingestWorker.kill('SIGTERM');
      const late = setTimeout(() => ingestWorker?.kill('SIGKILL'), 20_000);
      exits.worker = await exited;
      clearTimeout(late);
    }
    for (const [i, server] of servers.entries()) exits[`server ${i}`] = await server.stop('SIGTERM');
    await nginx?.stop();
    await stores?.close();
    await Promise.all([postgres?.stop(), redis?.stop()]);
    await scratch?.remove();
    assert.deepEqual(exits, { worker: 0, 'server 0': 0, 'server 1': 0 }, servers.flatMap((s) => s.lines).join('\n'));
    for (const server of servers) {
      assert.ok(!server.lines.some((line) => line.includes('still holding')), server.lines.join('\n'));
    }
  });

  it('sees both servers up, then N tiles requested through nginx as N', async () => {
    await eventually(
      'both servers and the ingest worker scraped',
      async () => (await single('sum(up{job="nadir"})')) === 2 && (await single('sum(up{job="nadir-worker"})')) === 1,
      SCRAPED_WITHIN_MS,
    );
    const tiles = 60;
    const statuses: number[] = [];
    for (let batch = 0; batch < tiles / 10; batch++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(`${nginx.url}${tilePath}`)));
      for (const answer of answers) {
        statuses.push(answer.status);
        await answer.arrayBuffer();
      }
    }
    assert.deepEqual(new Set(statuses), new Set([200]));
    const requested = `sum(nadir_http_requests_total{job="nadir",route="${LOCATION_TILE_PATH}",status="200"})`;
    await eventually(
      'Prometheus counts every tile',
      async () => (await single(requested)) === tiles,
      SCRAPED_WITHIN_MS,
    );
    const answered = 'sum(nadir_tile_answers_total{job="nadir",outcome=~"pass_through|composite"})';
    assert.equal(await single(answered), tiles);
    // nginx spread them: each server (the one of two workers too) counted some.
    const perServer = await prometheus.query(`sum by (instance) (${requested.slice(4, -1)})`);
    assert.equal(perServer.length, 2);
    assert.ok(
      perServer.every((sample) => sample.value > 0),
      JSON.stringify(perServer),
    );
    const latency = await single(
      `sum(nadir_http_request_duration_seconds_count{job="nadir",route="${LOCATION_TILE_PATH}"})`,
    );
    assert.equal(latency, tiles);
    // The servers' PostgreSQL round trips (keys, the catalogue's change counter) and the queue.
    assert.ok(((await single('sum(nadir_database_queries_total{job="nadir",result="ok"})')) ?? 0) > 0);
    assert.equal(await single('sum(nadir_ingest_jobs{job="nadir-worker"})'), 0, 'an empty queue');
    assert.equal(await single('nadir_ingest_progress_ratio{job="nadir-worker"}'), 1);
  });

  it('a stopped server shows as down, the other as up', async () => {
    const stopped = servers[1] as NadirServer;
    assert.equal(await stopped.stop('SIGTERM'), 0);
    await eventually(
      'the stopped server is down',
      async () => (await single(`up{job="nadir",instance="${targets[1]}"}`)) === 0,
      SCRAPED_WITHIN_MS,
    );
    assert.equal(await single(`up{job="nadir",instance="${targets[0]}"}`), 1);
  });

  it('loads the alert rules (and promtool accepts them and the scrape config)', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', join(PROMETHEUS_DEPLOY, 'alerts.yml')]);
    assert.match(stdout, /SUCCESS: 10 rules found/);
    await run('promtool', ['check', 'config', join(PROMETHEUS_DEPLOY, 'prometheus.yml')]);
    await eventually(
      'every rule evaluated without error',
      async () => {
        const rules = await prometheus.rules();
        return rules.length === 10 && rules.every((rule) => rule.health === 'ok');
      },
      SCRAPED_WITHIN_MS,
    );
  });

  it('runs every query of the Grafana dashboard, over metrics the servers export', async () => {
    const dashboard = JSON.parse(await readFile(join(PROJECT_ROOT, 'deploy/grafana/nadir-dashboard.json'), 'utf8')) as {
      panels: { targets?: { expr: string }[] }[];
    };
    const expressions = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
    assert.ok(expressions.length > 15);
    const exported = new Set(
      (await prometheus.query('count by (__name__) ({job=~"nadir|nadir-worker"})')).map((s) => s.metric.__name__),
    );
    for (const expression of expressions) {
      // Grafana's variables, as Grafana fills them in.
      const query = expression
        .replaceAll('$__rate_interval', '1m')
        .replaceAll('$__range', '5m')
        .replaceAll('$instance', '.*');
      await prometheus.query(query);
      for (const name of query.match(/\bnadir_[a-z0-9_]+/g) ?? []) {
        const family = exported.has(name) || ['_bucket', '_sum', '_count'].some((end) => exported.has(`${name}${end}`));
        assert.ok(family || exported.has(name.replace(/_(bucket|sum|count)$/, '_bucket')), `${name} is exported`);
      }
    }
  });

  // Last: the queue's worker may not outlive PostgreSQL's stop.
  it('a stopped engine (PostgreSQL) shows as down on the server, and up again once back', async () => {
    const database = `nadir_database_up{job="nadir",instance="${targets[0]}"}`;
    assert.equal(await single(database), 1);
    assert.equal(await single(`nadir_redis_up{job="nadir",instance="${targets[0]}"}`), 1);
    await postgres.halt();
    try {
      await eventually('the database shows as down', async () => (await single(database)) === 0, SCRAPED_WITHIN_MS);
    } finally {
      await postgres.restart();
    }
    await eventually('the database shows as up again', async () => (await single(database)) === 1, SCRAPED_WITHIN_MS);
  });
});
