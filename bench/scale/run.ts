/**
 * Scale benchmark (issue 16), three questions on this machine:
 *
 * - coverage on PostgreSQL + PostGIS beside SQLite, the same synthetic surveys and points
 *   (bench/coverage/), at 1M surveys (and 10M in a full run): p99, req/s and server CPU per request
 *   at 16 connections, the real `nadir serve` on each;
 * - pass-through tiles/s of one server counting tile limits in Redis (NADIR_REDIS_URL) against the
 *   same server counting them in memory;
 * - two servers behind nginx as deploy/nginx/nadir.conf configures it, against one server.
 *
 * PostgreSQL, Redis and nginx are the test suite's throwaway servers (test/support/servers.ts).
 */
import { execFile } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { promisify } from 'node:util';
import { aoiLonLatBounds } from '../../src/geo/aoi.js';
import { deploySite } from '../../test/support/nginx-site.js';
import { freePort, startNginx, startPostgres, startRedis } from '../../test/support/servers.js';
import { cachedCatalogue, queryPoints } from '../coverage/catalogue.js';
import { openFloor } from '../coverage/floor.js';
import { measureHttp, type Prepared, RADIUS, RESOURCES } from '../coverage/http.js';
import { WORK as COVERAGE_WORK } from '../coverage/run.js';
import { startCoverageServer } from '../coverage/server.js';
import { cpuBetween, processCpuMs, sampleCpu, treeCpuMs } from '../load/cpu.js';
import { startNadirServe } from '../load/nadir-serve.js';
import { removeScratch, scratchDir } from '../load/processes.js';
import { assertAllStatus, runWrk } from '../load/wrk.js';
import type { SectionOptions } from '../report/section.js';
import { type TileData, tileData } from '../tiles/data.js';
import { findTileLists, nadirTileUrl } from '../tiles/tile-lists.js';
import { loadPostgresCatalogue } from './postgres-catalogue.js';
import type { CoverageOnEngine, ScaleRaw, ScaleSettings, TileRate, TileRound, TileSetup } from './raw.js';

const run = promisify(execFile);

/** The size at which an uncached answer's CPU is held against the in-process search (issue 37). */
const GOAL_SEARCH_SURVEYS = 1e6;

export function scaleSettings(quick: boolean, overrides: Partial<ScaleSettings> = {}): ScaleSettings {
  const base: ScaleSettings = quick
    ? {
        sizes: [1e5],
        connections: 16,
        seconds: 3,
        warmupSeconds: 1,
        points: 2000,
        tileConnections: 64,
        tileSeconds: 3,
        tileRounds: 1,
        maxTiles: 200,
        cacheMb: 256,
      }
    : {
        sizes: [1e6, 1e7],
        connections: 16,
        seconds: 8,
        warmupSeconds: 2,
        points: 10_000,
        tileConnections: 64,
        tileSeconds: 7,
        tileRounds: 5,
        maxTiles: 400,
        cacheMb: 256,
      };
  return { ...base, ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) };
}

async function versions(): Promise<Record<string, string>> {
  const first = async (command: string, args: string[]) => {
    const { stdout, stderr } = await run(command, args).catch((e) => ({ stdout: '', stderr: String(e) }));
    return `${stdout}${stderr}`.trim().split('\n')[0] ?? '';
  };
  return {
    node: process.version,
    postgres: await first('/usr/lib/postgresql/15/bin/postgres', ['--version']),
    redis: await first('redis-server', ['--version']),
    nginx: (await first('nginx', ['-v'])).replace('nginx version: ', ''),
  };
}

/**
 * PostgreSQL's buffer cache as a deployment sizes it, a quarter of the machine's memory (the
 * PostgreSQL manual's "reasonable starting value"; docs/deploy.md): with the default 128 MB, a
 * 1M-survey table (1.3 GB) was read through the kernel's page cache at every search.
 */
const SHARED_BUFFERS_MB = Math.floor(totalmem() / 4 / 2 ** 20);

/**
 * The pool a deployment gives nadir on this database (docs/deploy.md): HikariCP's "About Pool
 * Sizing", connections = cores x 2 + effective spindles (none here: the catalogue is in memory),
 * for the one server there is. Uncached coverage on PostgreSQL is measured with it and with the
 * default, in turn: on 2 cores the default's 20 backends cost the database more CPU a search.
 */
const SIZED_CONNECTIONS = cpus().length * 2;

/** catalogue.search in this process, one caller (bench/coverage/floor.ts): ms and CPU ms a search. */
async function inProcessSearch(path: string, points: [number, number][], seconds: number) {
  const floor = await openFloor(path, [...RESOURCES]);
  try {
    const areas = points.map(([lon, lat]) => aoiLonLatBounds({ lon, lat, radius: RADIUS }));
    await floor.search(areas, 1); // the first call passes every area once: page faults stay out
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const rate = await floor.search(areas, seconds);
    const { user, system } = process.cpuUsage(cpuBefore);
    // The call's busy share (it also warms up, unmeasured) times the measured time a search.
    const busy = (user + system) / 1000 / (performance.now() - started);
    return { msPerSearch: 1000 / rate.perSecond, cpuMsPerSearch: (busy * 1000) / rate.perSecond };
  } finally {
    floor.close();
  }
}

/** Coverage at each size on both engines, one server at a time; the in-process search at the goal size. */
async function measureCoverageEngines(
  settings: ScaleSettings,
  options: SectionOptions,
  log: (line: string) => void,
): Promise<Pick<ScaleRaw, 'coverage' | 'search'>> {
  const results: CoverageOnEngine[] = [];
  let search: ScaleRaw['search'];
  const postgres = await startPostgres({ shared_buffers: `${SHARED_BUFFERS_MB}MB` });
  const postmaster = await listenerPid(postgres.port);
  const scratch = await scratchDir('scale-pg');
  try {
    for (const surveys of settings.sizes) {
      const sqlite = await cachedCatalogue(COVERAGE_WORK, surveys, options.fresh);
      log(`${surveys} surveys: SQLite ${sqlite.built ? `built in ${sqlite.buildSeconds?.toFixed(0)} s` : 'reused'}`);
      const url = await postgres.createDatabase(`surveys_${surveys}`);
      const loaded = await loadPostgresCatalogue(url, scratch, surveys, log);
      log(`${surveys} surveys: PostgreSQL loaded in ${loaded.seconds.toFixed(0)} s`);
      const points = queryPoints(sqlite.layout, settings.points);
      // measureHttp reads the points only; the floors' areas are not measured here.
      const prepared: Prepared = { surveys, path: sqlite.path, layout: sqlite.layout, areas: [], points };
      if (surveys === GOAL_SEARCH_SURVEYS) {
        search = { surveys, ...(await inProcessSearch(sqlite.path, points, settings.seconds)) };
        log(
          `${surveys} in-process search: ${search.msPerSearch.toFixed(3)} ms, ${search.cpuMsPerSearch.toFixed(3)} CPU ms`,
        );
      }
      const engines = [
        { engine: 'sqlite' as const, database: sqlite.path, buildSeconds: sqlite.buildSeconds },
        { engine: 'postgres' as const, database: url, buildSeconds: loaded.seconds },
      ];
      type Run = (typeof engines)[number] & { cache: 'on' | 'off'; databaseConnections?: number };
      const runs = (['on', 'off'] as const).flatMap((cache): Run[] =>
        engines.flatMap((e) =>
          e.engine === 'postgres' && cache === 'off'
            ? [
                { ...e, cache },
                { ...e, cache, databaseConnections: SIZED_CONNECTIONS },
              ]
            : [{ ...e, cache }],
        ),
      );
      for (const { engine, database, buildSeconds, cache, databaseConnections } of runs) {
        // '1:no-cache': one process with NADIR_COVERAGE_CACHE_MB=0 (bench/coverage/server.ts).
        const server = await startCoverageServer({
          database,
          workers: cache === 'on' ? '1' : '1:no-cache',
          env: databaseConnections ? { NADIR_DATABASE_CONNECTIONS: String(databaseConnections) } : {},
        });
        try {
          // measureHttp reads the server's CPU just before and after its measured run: PostgreSQL's
          // processes are read at the same moments.
          const databaseMs: number[] = [];
          const measured = {
            ...server,
            cpuSeconds: async () => {
              if (engine === 'postgres') databaseMs.push(await treeCpuMs(postmaster));
              return server.cpuSeconds();
            },
          };
          const http = await measureHttp(measured, prepared, settings);
          const [before, after] = databaseMs.slice(-2);
          const databaseCpuMsPerRequest =
            before !== undefined && after !== undefined ? (after - before) / http.requests : undefined;
          log(
            `${surveys} ${engine}${databaseConnections ? ` (${databaseConnections} connections)` : ''} cache ${cache}: ${http.requestsPerSecond.toFixed(0)} req/s, p99 ${http.p99Ms.toFixed(1)} ms, ${http.cpuMsPerRequest.toFixed(2)} ms CPU${databaseCpuMsPerRequest === undefined ? '' : ` + PostgreSQL ${databaseCpuMsPerRequest.toFixed(2)}`}`,
          );
          results.push({ engine, surveys, buildSeconds, cache, http, databaseCpuMsPerRequest, databaseConnections });
        } finally {
          await server.stop();
        }
      }
      await postgres.psql('postgres', `DROP DATABASE "surveys_${surveys}"`);
    }
  } finally {
    await removeScratch(scratch);
    await postgres.stop();
  }
  return { coverage: results, search };
}

/** wrk over the pass-through tiles at `base` for `seconds`, every answer a 200. */
async function tileRun(
  setup: TileSetup,
  base: string,
  data: TileData,
  tiles: TileUrlSource,
  s: ScaleSettings,
  seconds = s.tileSeconds,
) {
  const urls = tiles.map((t) => nadirTileUrl(base, data.apiKey, t, 'jpg'));
  const result = await runWrk({ urls, connections: s.tileConnections, seconds, threads: 2 });
  assertAllStatus(result, 200, `tiles ${setup}`);
  return result;
}

/** The pid of the process listening on a loopback TCP port (redis-server's, for its CPU). */
async function listenerPid(port: number): Promise<number> {
  const { stdout } = await run('ss', ['-ltnpH', `sport = :${port}`]);
  const pid = /pid=(\d+)/.exec(stdout)?.[1];
  if (!pid) throw new Error(`no process found listening on port ${port}`);
  return Number(pid);
}

type TileUrlSource = Awaited<ReturnType<typeof findTileLists>>['passThrough'];

/**
 * One server counting limits in memory, one with Redis, and two with Redis behind nginx, all
 * started at once (a server nobody asks uses no CPU) and measured in turn, `tileRounds` times, so
 * that a slow moment of the machine falls on every set-up alike; the median round counts.
 */
async function measureTileSetups(settings: ScaleSettings, options: SectionOptions, log: (line: string) => void) {
  const data = await tileData({ fresh: options.fresh, log });
  const env = { NADIR_DATA_DIR: data.dataDir, NADIR_TILE_CACHE_MB: `${settings.cacheMb}` };
  const redis = await startRedis();
  const precut = await scratchDir('scale-precut');
  const stops: (() => Promise<void>)[] = [];
  try {
    const withRedis = { ...env, NADIR_REDIS_URL: redis.url };
    const memory = await startNadirServe({ env, label: 'scale-memory' });
    stops.push(memory.stop);
    const one = await startNadirServe({ env: withRedis, label: 'scale-redis' });
    stops.push(one.stop);
    const two = [
      await startNadirServe({ env: { ...withRedis, NADIR_SERVER_ID: 'scale-a' }, label: 'scale-a' }),
      await startNadirServe({ env: { ...withRedis, NADIR_SERVER_ID: 'scale-b' }, label: 'scale-b' }),
    ];
    const redisPid = await listenerPid(redis.port);
    for (const server of two) stops.push(server.stop);
    const listen = await freePort();
    const nginx = await startNginx(
      await deploySite(
        listen,
        two.map((s) => Number(new URL(s.url).port)),
      ),
      listen,
    );
    stops.push(nginx.stop);
    const tiles = (await findTileLists(memory.url, data, precut, settings.maxTiles)).passThrough;
    const groupOf = (server: { child: { pid?: number } }) => server.child.pid as number;
    const setups: [TileSetup, string, number[], boolean][] = [
      ['memory', memory.url, [groupOf(memory)], false],
      ['redis', one.url, [groupOf(one)], true],
      ['two-behind-nginx', nginx.url, two.map(groupOf), true],
    ];
    const runs = new Map<TileSetup, Awaited<ReturnType<typeof tileRun>>[]>(setups.map(([setup]) => [setup, []]));
    const figures = new Map<TileSetup, TileRound[]>(setups.map(([setup]) => [setup, []]));
    for (let round = 1; round <= settings.tileRounds; round++) {
      // The order rotates, so that a slow moment of the machine does not always fall on the same set-up.
      const shift = (round - 1) % setups.length;
      for (const [setup, url, groups, usesRedis] of [...setups.slice(shift), ...setups.slice(0, shift)]) {
        // A second of the same load first (connections open, caches warm), outside the CPU sample.
        await tileRun(setup, url, data, tiles, settings, 1);
        const before = await sampleCpu(groups);
        const redisBefore = await processCpuMs(redisPid);
        const result = await tileRun(setup, url, data, tiles, settings);
        const cpu = cpuBetween(before, await sampleCpu(groups));
        const redisMs = (await processCpuMs(redisPid)) - redisBefore;
        runs.get(setup)?.push(result);
        const tilesAnswered = Math.max(1, result.requests);
        figures.get(setup)?.push({
          round,
          requestsPerSecond: result.requestsPerSecond,
          cpuMsPerTile: cpu.totalMs / tilesAnswered,
          ...(usesRedis ? { redisCpuMsPerTile: redisMs / tilesAnswered } : {}),
        });
        log(
          `tiles round ${round} ${setup}: ${result.requestsPerSecond.toFixed(0)} tiles/s, ${(cpu.totalMs / tilesAnswered).toFixed(4)} CPU ms a tile${usesRedis ? `, Redis ${(redisMs / tilesAnswered).toFixed(4)}` : ''}`,
        );
      }
    }
    const rates = setups.map(([setup]): TileRate => {
      const results = [...(runs.get(setup) ?? [])].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
      const median = results[Math.floor(results.length / 2)] as (typeof results)[number];
      const { requestsPerSecond, p50Ms, p99Ms, requests, statuses } = median;
      return {
        setup,
        requestsPerSecond,
        p50Ms,
        p99Ms,
        requests,
        statuses,
        rounds: results.map((r) => r.requestsPerSecond),
        roundFigures: figures.get(setup) ?? [],
      };
    });
    return { rates, tileCount: tiles.length };
  } finally {
    for (const stop of stops.reverse()) await stop();
    await redis.stop();
    await removeScratch(precut);
  }
}

/** Measures; bench/scale/report.ts words the figures. */
export async function measureScale(options: SectionOptions, overrides: Partial<ScaleSettings> = {}): Promise<ScaleRaw> {
  const settings = scaleSettings(options.quick, overrides);
  const log = (line: string) => options.log(`scale: ${line}`);
  const started = Date.now();
  const loadStart = loadavg();
  const { coverage, search } = await measureCoverageEngines(settings, options, log);
  const { rates, tileCount } = await measureTileSetups(settings, options, log);
  return {
    settings,
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model.trim() ?? 'unknown',
      memoryGb: totalmem() / 2 ** 30,
      loadStart,
      loadEnd: loadavg(),
    },
    versions: await versions(),
    coverage,
    search,
    postgresSharedBuffersMb: SHARED_BUFFERS_MB,
    tiles: rates,
    tileCount,
    seconds: (Date.now() - started) / 1000,
  };
}
