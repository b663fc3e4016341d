/** The scale part's figures as a report Section: issue 16's goals, tables, a chart, conditions. */
import { type Goal, goal, type Section, type Table } from '../report/section.js';
import type { CoverageOnEngine, ScaleRaw, TileRate, TileSetup } from './raw.js';

const GOAL_P99_MS = 10;
const GOAL_SURVEYS = 1e6;
const GOAL_REDIS_SHARE = 80;

const label = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : `${n}`);
const SETUP_NAMES: Record<TileSetup, string> = {
  memory: 'one server, tile limits in memory',
  redis: 'one server, tile limits in Redis (NADIR_REDIS_URL)',
  'two-behind-nginx': 'two servers (Redis) behind nginx, deploy/nginx/nadir.conf',
};

function rateOf(raw: ScaleRaw, setup: TileSetup): TileRate | undefined {
  return raw.tiles.find((t) => t.setup === setup);
}

function coverageTable(raw: ScaleRaw): Table {
  return {
    caption: `Coverage on SQLite and on PostgreSQL + PostGIS (${raw.settings.connections} connections, one round)`,
    columns: ['surveys', 'engine', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms per request', 'load s'],
    rows: raw.coverage.map((c: CoverageOnEngine) => [
      label(c.surveys),
      c.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL',
      c.http.requestsPerSecond,
      c.http.p50Ms,
      c.http.p99Ms,
      c.http.cpuMsPerRequest,
      c.buildSeconds ?? null,
    ]),
    notes: [
      "The real `nadir serve`, one process, closed loop (wrk), the same synthetic surveys and query points on both engines (bench/coverage/catalogue.ts). Server CPU: the nadir process only; PostgreSQL's own CPU is not in it. Load s: SQLite build (blank when reused from bench/work/coverage) or PostgreSQL load (migrate, multi-row INSERT, ANALYZE).",
    ],
  };
}

function tileTable(raw: ScaleRaw): Table {
  const memory = rateOf(raw, 'memory')?.requestsPerSecond;
  return {
    caption: `Pass-through jpg tiles/s by server set-up (${raw.settings.tileConnections} connections, ${raw.tileCount} tiles round robin; median of ${raw.settings.tileRounds ?? 1} rounds taken in turn)`,
    columns: ['set-up', 'tiles/s', 'p50 ms', 'p99 ms', '% of one server in memory', 'every round, tiles/s'],
    rows: raw.tiles.map((t) => [
      SETUP_NAMES[t.setup],
      t.requestsPerSecond,
      t.p50Ms,
      t.p99Ms,
      memory ? (100 * t.requestsPerSecond) / memory : null,
      t.rounds ? t.rounds.map((r) => r.toFixed(0)).join(', ') : null,
    ]),
    notes: [
      "Pass-through tiles cost the server least, so the per-request cost of a Redis round trip shows most. Every server shares one SQLite data folder; all processes, wrk and nginx included, share the machine's cores, so two servers can only gain where one leaves a core idle.",
    ],
  };
}

function goals(raw: ScaleRaw): Goal[] {
  const pg = raw.coverage.find((c) => c.engine === 'postgres' && c.surveys === GOAL_SURVEYS);
  const memory = rateOf(raw, 'memory')?.requestsPerSecond;
  const redis = rateOf(raw, 'redis')?.requestsPerSecond;
  return [
    goal(
      `coverage p99 on PostgreSQL at ${label(GOAL_SURVEYS)} surveys, ${raw.settings.connections} connections`,
      pg ? pg.http.p99Ms : null,
      GOAL_P99_MS,
      'ms',
      'max',
    ),
    goal(
      'pass-through tiles/s with Redis limits, as a share of in-memory limits',
      memory && redis ? (100 * redis) / memory : null,
      GOAL_REDIS_SHARE,
      '%',
      'min',
    ),
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
