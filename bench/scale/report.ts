/** The scale part's figures as a report Section: issue 16's goals, tables, a chart, conditions. */
import { DEFAULT_DATABASE_CONNECTIONS } from '../../src/config/config.js';
import { type Goal, goal, type Section, type Table } from '../report/section.js';
import { spread } from '../report/spread.js';
import type { CoverageOnEngine, ScaleRaw, TileRate, TileRound, TileSetup } from './raw.js';

const GOAL_P99_MS = 10;
/** Issue 37: every request a new place (the page cache off), SQLite at 1M. */
const GOAL_UNCACHED_SQLITE_P99_MS = 5;
/** Issue 37: an uncached answer's CPU against the in-process search's, SQLite, same run. */
const GOAL_SEARCH_CPU_RATIO = 2;
/** Issue 37: PostgreSQL's CPU per answer against SQLite's, uncached, same run. */
const GOAL_PG_CPU_RATIO = 1.5;
const GOAL_SURVEYS = 1e6;
/** Issue 37 (it was 80% in issue 16). */
const GOAL_REDIS_SHARE = 90;

const label = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : `${n}`);
const SETUP_NAMES: Record<TileSetup, string> = {
  memory: 'one server, tile limits in memory',
  redis: 'one server, tile limits in Redis (NADIR_REDIS_URL)',
  'two-behind-nginx': 'two servers (Redis) behind nginx, deploy/nginx/nadir.conf',
};

function rateOf(raw: ScaleRaw, setup: TileSetup): TileRate | undefined {
  return raw.tiles.find((t) => t.setup === setup);
}

/** `figure(a) / figure(b)` of the same round, median over rounds (runs that recorded rounds), else undefined. */
function sameRound(raw: ScaleRaw, a: TileSetup, b: TileSetup, figure: (r: TileRound) => number | undefined) {
  const rounds = rateOf(raw, a)?.roundFigures ?? [];
  const others = rateOf(raw, b)?.roundFigures ?? [];
  const ratios = rounds.flatMap((r) => {
    const other = others.find((o) => o.round === r.round);
    const [x, y] = [figure(r), other && figure(other)];
    return x !== undefined && y !== undefined && y > 0 ? [x / y] : [];
  });
  return ratios.length > 0 ? spread(ratios) : undefined;
}

const medianOf = (rounds: TileRound[] | undefined, figure: (r: TileRound) => number | undefined) => {
  const values = (rounds ?? []).flatMap((r) => figure(r) ?? []);
  return values.length > 0 ? spread(values).median : null;
};

function coverageTable(raw: ScaleRaw): Table {
  return {
    caption: `Coverage on SQLite and on PostgreSQL + PostGIS (${raw.settings.connections} connections, one round)`,
    columns: [
      'surveys',
      'engine',
      'page cache',
      'req/s',
      'p50 ms',
      'p99 ms',
      'nadir CPU ms per request',
      "PostgreSQL's CPU ms per request",
      'load s',
    ],
    rows: raw.coverage.map((c: CoverageOnEngine) => [
      label(c.surveys),
      c.engine === 'sqlite'
        ? 'SQLite'
        : `PostgreSQL, ${connectionsOf(c)} connections${c.databaseConnections ? '' : ' (default)'}`,
      c.cache === 'off' ? 'off: every request searches' : 'on',
      c.http.requestsPerSecond,
      c.http.p50Ms,
      c.http.p99Ms,
      c.http.cpuMsPerRequest,
      c.databaseCpuMsPerRequest ?? null,
      c.buildSeconds ?? null,
    ]),
    notes: [
      "The real `nadir serve`, one process, closed loop (wrk), the same synthetic surveys and query points on both engines (bench/coverage/catalogue.ts). CPU: the nadir process's, and PostgreSQL's server processes' (its backends included) during the same measured run. Load s: SQLite build (blank when reused from bench/work/coverage) or PostgreSQL load (migrate, multi-row INSERT, VACUUM and ANALYZE, CHECKPOINT: the load's writes are done before anything is measured).",
    ],
  };
}

function tileTable(raw: ScaleRaw): Table {
  const memory = rateOf(raw, 'memory')?.requestsPerSecond;
  return {
    caption: `Pass-through jpg tiles/s by server set-up (${raw.settings.tileConnections} connections, ${raw.tileCount} tiles round robin; median of ${raw.settings.tileRounds ?? 1} rounds taken in turn)`,
    columns: [
      'set-up',
      'tiles/s',
      'p50 ms',
      'p99 ms',
      '% of one server in memory',
      'every round, tiles/s',
      'nadir CPU ms a tile',
      'Redis CPU ms a tile',
    ],
    rows: raw.tiles.map((t) => {
      const share = sameRound(raw, t.setup, 'memory', (r) => r.requestsPerSecond);
      return [
        SETUP_NAMES[t.setup],
        t.requestsPerSecond,
        t.p50Ms,
        t.p99Ms,
        share ? 100 * share.median : memory ? (100 * t.requestsPerSecond) / memory : null,
        t.rounds ? t.rounds.map((r) => r.toFixed(0)).join(', ') : null,
        medianOf(t.roundFigures, (r) => r.cpuMsPerTile),
        medianOf(t.roundFigures, (r) => r.redisCpuMsPerTile),
      ];
    }),
    notes: [
      "% of one server in memory: the median over rounds of the two set-ups' rates in the same round (the order rotates each round). CPU: user + system time of the set-up's nadir processes, and of redis-server, during the measured run, over its answers (nginx's is in neither).",
      "Pass-through tiles cost the server least, so the per-request cost of a Redis round trip shows most. Every server shares one SQLite data folder; all processes, wrk and nginx included, share the machine's cores, so two servers can only gain where one leaves a core idle.",
    ],
  };
}

/** The nadir process's PostgreSQL pool in a coverage run (results without the field: the default). */
function connectionsOf(run: CoverageOnEngine): number {
  return run.databaseConnections ?? DEFAULT_DATABASE_CONNECTIONS;
}

function goals(raw: ScaleRaw): Goal[] {
  const at = (engine: CoverageOnEngine['engine'], cache: 'on' | 'off', sized = false) =>
    raw.coverage.find(
      (c) =>
        c.engine === engine &&
        c.surveys === GOAL_SURVEYS &&
        (c.cache ?? 'on') === cache &&
        (c.databaseConnections !== undefined) === sized,
    );
  const pg = at('postgres', 'on');
  // PostgreSQL's uncached goals count the pool sized for the database (bench/scale/run.ts), where
  // the run measured one; older results measured only the default.
  const pgUncached = at('postgres', 'off', true) ?? at('postgres', 'off');
  const sqliteUncached = at('sqlite', 'off');
  const pool = pgUncached ? `, ${connectionsOf(pgUncached)} connections` : '';
  const uncachedGoals = sqliteUncached
    ? [
        goal(
          `coverage p99 on SQLite at ${label(GOAL_SURVEYS)} surveys, every request a new place (page cache off)`,
          sqliteUncached.http.p99Ms,
          GOAL_UNCACHED_SQLITE_P99_MS,
          'ms',
          'max',
        ),
        goal(
          `coverage p99 on PostgreSQL at ${label(GOAL_SURVEYS)} surveys, every request a new place (page cache off)${pool}`,
          pgUncached ? pgUncached.http.p99Ms : null,
          GOAL_P99_MS,
          'ms',
          'max',
        ),
        goal(
          `coverage CPU per answer, PostgreSQL's (nadir's and the database's${pool}) ÷ SQLite's, page cache off, same run`,
          pgUncached?.databaseCpuMsPerRequest !== undefined
            ? (pgUncached.http.cpuMsPerRequest + pgUncached.databaseCpuMsPerRequest) /
                sqliteUncached.http.cpuMsPerRequest
            : null,
          GOAL_PG_CPU_RATIO,
          'x',
          'max',
        ),
        goal(
          `coverage CPU per answer on SQLite, page cache off, ÷ the in-process search's (catalogue.search, one caller), same run`,
          raw.search ? sqliteUncached.http.cpuMsPerRequest / raw.search.cpuMsPerSearch : null,
          GOAL_SEARCH_CPU_RATIO,
          'x',
          'max',
        ),
      ]
    : [];
  const memory = rateOf(raw, 'memory')?.requestsPerSecond;
  const redis = rateOf(raw, 'redis')?.requestsPerSecond;
  const sameRoundRatio = sameRound(raw, 'redis', 'memory', (r) => r.requestsPerSecond);
  const sameRoundShare = sameRoundRatio ? 100 * sameRoundRatio.median : undefined;
  return [
    goal(
      `coverage p99 on PostgreSQL at ${label(GOAL_SURVEYS)} surveys, ${raw.settings.connections} connections`,
      pg ? pg.http.p99Ms : null,
      GOAL_P99_MS,
      'ms',
      'max',
    ),
    goal(
      'pass-through tiles/s with Redis limits, as a share of in-memory limits (same round)',
      sameRoundShare ?? (memory && redis ? (100 * redis) / memory : null),
      GOAL_REDIS_SHARE,
      '%',
      'min',
    ),
    ...uncachedGoals,
  ];
}

export function scaleSection(raw: ScaleRaw): Section {
  const sizes = raw.settings.sizes;
  const findings: string[] = [];
  if (!sizes.includes(GOAL_SURVEYS)) {
    findings.push(
      `This run measured ${sizes.map(label).join(', ')} surveys, not ${label(GOAL_SURVEYS)}: the PostgreSQL goal is not measured (a quick run; the full run measures 1M and 10M).`,
    );
  }
  return {
    id: 'scale',
    title: 'Scale: PostgreSQL, Redis, two servers',
    conditions: [
      `${raw.machine.cpus} cores (${raw.machine.model}), ${raw.machine.memoryGb.toFixed(1)} GB; load ${raw.machine.loadStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${raw.machine.loadEnd.map((l) => l.toFixed(1)).join(' ')} at the end.`,
      `${Object.values(raw.versions).join('; ')}.`,
      'PostgreSQL, Redis and nginx are throwaway servers on loopback started as the test suite starts them (test/support/servers.ts); PostgreSQL runs with fsync off, which a read benchmark does not touch.',
      raw.postgresSharedBuffersMb
        ? `PostgreSQL's shared_buffers: ${raw.postgresSharedBuffersMb.toLocaleString('en-US')} MB, a quarter of the machine's memory as a deployment sets it (docs/deploy.md); SQLite reads its file through a memory map, so both search from memory.`
        : "PostgreSQL's shared_buffers: the default 128 MB.",
      ...(raw.search
        ? [
            `In-process search (bench/coverage/floor.ts: catalogue.search on SQLite at ${label(raw.search.surveys)} surveys in the benchmark's process, one caller, the same points): ${raw.search.msPerSearch.toFixed(3)} ms and ${raw.search.cpuMsPerSearch.toFixed(3)} CPU ms a search.`,
          ]
        : []),
      `Measured in ${(raw.seconds / 60).toFixed(1)} min.`,
    ],
    goals: goals(raw),
    tables: [coverageTable(raw), tileTable(raw)],
    charts: [
      {
        kind: 'bar',
        file: 'scale-tiles.png',
        title: 'Pass-through tiles/s by server set-up',
        yLabel: 'tiles/s',
        categories: raw.tiles.map((t) => t.setup),
        series: [{ name: 'tiles/s', values: raw.tiles.map((t) => t.requestsPerSecond) }],
      },
    ],
    findings,
    raw,
  };
}
