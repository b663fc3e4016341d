/** The coverage benchmark's figures as a report Section: goals, tables, charts, findings. */

import { formatNumber } from '../report/markdown.js';
import { type Chart, type Goal, goal, type Point, type Section, type Table } from '../report/section.js';
import { type Spread, spread } from '../report/spread.js';
import type { CoverageRaw, HttpFigures, SizeResult } from './raw.js';

/** Issue 19: p99 <= 5 ms at 16 connections with 1M surveys, one process and workers alike. */
const GOAL_P99_MS = 5;
/** Issue 19: with one process per core, at least this many coverage requests a second. */
const GOAL_WORKERS_RPS = 4000;
const GOAL_SURVEYS = 1e6;

/** "633 (601-650)": the median, and the range over rounds when there was more than one. */
function withRange(s: Spread, rounds: number): string {
  if (!Number.isFinite(s.median)) return '-';
  const median = formatNumber(s.median);
  return rounds > 1 ? `${median} (${formatNumber(s.low)}-${formatNumber(s.high)})` : median;
}

const point = (x: number, s: Spread): Point => ({ x, y: s.median, low: s.low, high: s.high });
const label = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : `${n}`);
/** `1:no-cache`: one process with NADIR_COVERAGE_CACHE_MB=0 (bench/coverage/server.ts). */
const serverName = (setting: string) => {
  const [workers, variant] = setting.split(':');
  const name = workers === '1' ? 'nadir serve, 1 process' : `nadir serve, NADIR_WORKERS=${workers}`;
  return variant === 'no-cache' ? `${name}, NADIR_COVERAGE_CACHE_MB=0` : name;
};
/** Short enough for a chart's legend. */
const seriesName = (setting: string) => {
  const [workers, variant] = setting.split(':');
  const name = workers === '1' ? 'nadir, 1 process' : `nadir, workers=${workers}`;
  return variant === 'no-cache' ? `${name}, no cache` : name;
};
/** The settings the goals are about: nadir serve as deployed (the page cache on). */
const deployed = (setting: string) => !setting.includes(':');

function http(size: SizeResult, workers: string, pick: (h: HttpFigures) => number): Spread {
  return spread(size.rounds.flatMap((r) => (r.http[workers] ? [pick(r.http[workers])] : [])));
}

const floors = (size: SizeResult) => ({
  search: spread(size.rounds.map((r) => r.search.perSecond)),
  searchP99: spread(size.rounds.map((r) => r.search.p99Ms)),
  sql: spread(size.rounds.map((r) => r.sql.perSecond)),
  sqlP99: spread(size.rounds.map((r) => r.sql.p99Ms)),
});

function httpTable(raw: CoverageRaw): Table {
  const n = raw.settings.rounds;
  return {
    caption: `Coverage over HTTP against catalogue size (${raw.settings.connections} connections; medians of ${n} round(s)${n > 1 ? ', min-max in brackets' : ''})`,
    columns: ['surveys', 'server', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms per request'],
    rows: raw.sizes.flatMap((size) =>
      raw.settings.workers.map((workers) => [
        label(size.surveys),
        serverName(workers),
        withRange(
          http(size, workers, (h) => h.requestsPerSecond),
          n,
        ),
        withRange(
          http(size, workers, (h) => h.p50Ms),
          n,
        ),
        withRange(
          http(size, workers, (h) => h.p99Ms),
          n,
        ),
        withRange(
          http(size, workers, (h) => h.cpuMsPerRequest),
          n,
        ),
      ]),
    ),
    notes: [
      "The real `nadir serve`, closed loop (wrk). Server CPU per request: user + system time of all the server's processes during the measured run, over the requests answered; unlike the rates it barely depends on how busy the machine is.",
    ],
  };
}

function floorTable(raw: CoverageRaw): Table {
  const n = raw.settings.rounds;
  return {
    caption: 'The in-process floors: one caller, compiled code, the same file and points',
    columns: ['surveys', 'catalogue.search q/s', 'search p99 ms', 'raw SQL q/s', 'raw SQL p99 ms'],
    rows: raw.sizes.map((size) => {
      const f = floors(size);
      return [label(size.surveys), withRange(f.search, n), f.searchP99.median, withRange(f.sql, n), f.sqlP99.median];
    }),
    notes: [
      'catalogue.search: what the route calls (SQL, exact footprint test, order, page of listings). Raw SQL: its candidate statement alone (R*Tree, join, type filter: what a search with no date runs), the least any search through SQLite costs.',
    ],
  };
}

function catalogueTable(raw: CoverageRaw): Table {
  return {
    caption: 'The synthetic catalogues and what a query matches',
    columns: [
      'surveys',
      'cities',
      'region km',
      'file MB',
      'build s',
      'candidates per query',
      'matches mean',
      'p50',
      'p90',
      'max',
      'none',
    ],
    rows: raw.sizes.map((s) => [
      label(s.surveys),
      String(s.cities),
      Math.round(s.regionKm),
      Math.round(s.databaseMb),
      s.buildSeconds === undefined ? 'reused' : s.buildSeconds,
      s.matches.candidatesMean,
      s.matches.mean,
      String(s.matches.p50),
      String(s.matches.p90),
      String(s.matches.max),
      `${(s.matches.zeroShare * 100).toFixed(0)}%`,
    ]),
    notes: [
      'Candidates: rows of the candidate statement (footprint bounds meet the AOI, dates and types match); matches: after the exact footprint test (the response `total`), over 2,000 of the query points.',
    ],
  };
}

function profileTable(raw: CoverageRaw): Table | undefined {
  const profile = raw.profile;
  if (!profile) return undefined;
  const pct = (share: number) => `${(share * 100).toFixed(1)}%`;
  const origins = profile.summary.origins
    .slice(0, 6)
    .map((o) => `${o.name} ${pct(o.share)}`)
    .join(', ');
  return {
    caption: `Where the server's CPU goes at ${label(profile.surveys)} surveys (V8 CPU profile of one process under the same load, ${formatNumber(profile.requestsPerSecond)} req/s while profiled)`,
    columns: ['self time', 'function', 'where'],
    rows: profile.summary.functions.slice(0, 12).map((f) => [pct(f.share), f.name, f.where]),
    notes: [
      `By origin: ${origins}. Shares are of the busy (non-idle) samples; time in native code (SQLite, the writev system call) counts as the JavaScript function that called it.`,
    ],
  };
}

function charts(raw: CoverageRaw): Chart[] {
  const over = (pick: (size: SizeResult) => Spread) => raw.sizes.map((size) => point(size.surveys, pick(size)));
  const httpSeries = (pick: (h: HttpFigures) => number, suffix = '', dashed = false) =>
    raw.settings.workers.map((workers) => ({
      name: `${seriesName(workers)}${suffix}`,
      dashed,
      points: over((size) => http(size, workers, pick)),
    }));
  return [
    {
      kind: 'line',
      file: 'coverage-throughput.png',
      title: 'Coverage: requests per second against catalogue size',
      xLabel: 'surveys in the catalogue',
      yLabel: 'requests (queries) per second',
      xLog: true,
      yLog: true,
      series: [
        ...httpSeries((h) => h.requestsPerSecond),
        { name: 'search, in-process', dashed: true, points: over((size) => floors(size).search) },
        { name: 'raw SQL, in-process', dashed: true, points: over((size) => floors(size).sql) },
      ],
    },
    {
      kind: 'line',
      file: 'coverage-latency.png',
      title: `Coverage: latency at ${raw.settings.connections} connections against catalogue size`,
      xLabel: 'surveys in the catalogue',
      yLabel: 'ms',
      xLog: true,
      yLog: true,
      series: [...httpSeries((h) => h.p99Ms, ', p99'), ...httpSeries((h) => h.p50Ms, ', p50', true)],
      references: [{ value: GOAL_P99_MS, label: `goal: p99 <= ${GOAL_P99_MS} ms at 1M` }],
    },
  ];
}

function goals(raw: CoverageRaw): Goal[] {
  const size = raw.sizes.find((s) => s.surveys === GOAL_SURVEYS);
  const latency = raw.settings.workers
    .filter(deployed)
    .map((workers) =>
      goal(
        `coverage p99 at 1M surveys, ${raw.settings.connections} connections, ${serverName(workers)}`,
        size ? http(size, workers, (h) => h.p99Ms).median : null,
        GOAL_P99_MS,
        'ms',
        'max',
      ),
    );
  const throughput = raw.settings.workers
    .filter((workers) => workers !== '1' && deployed(workers))
    .map((workers) =>
      goal(
        `coverage req/s at 1M surveys, ${raw.settings.connections} connections, ${serverName(workers)}`,
        size ? http(size, workers, (h) => h.requestsPerSecond).median : null,
        GOAL_WORKERS_RPS,
        'req/s',
        'min',
      ),
    );
  return [...latency, ...throughput];
}

function findings(raw: CoverageRaw): string[] {
  const out: string[] = [];
  const largest = raw.sizes.at(-1);
  const smallest = raw.sizes[0];
  const single = raw.settings.workers[0] ?? '1';
  if (largest && smallest && largest !== smallest) {
    const [a, b] = [floors(smallest), floors(largest)];
    const rps = (size: SizeResult) => http(size, single, (h) => h.requestsPerSecond).median;
    out.push(
      `From ${label(smallest.surveys)} to ${label(largest.surveys)} surveys (x${formatNumber(largest.surveys / smallest.surveys)}), ` +
        `${serverName(single)} goes from ${formatNumber(rps(smallest))} to ${formatNumber(rps(largest))} req/s and ` +
        `catalogue.search from ${formatNumber(a.search.median)} to ${formatNumber(b.search.median)} q/s. A query matches about as ` +
        'many surveys at every size (the catalogue table), so what grows is the R*Tree and the file a query reaches into, not the work per match.',
    );
    const cpu = http(largest, single, (h) => h.cpuMsPerRequest).median;
    const p50 = http(largest, single, (h) => h.p50Ms).median;
    const connections = raw.settings.connections;
    out.push(
      `At ${label(largest.surveys)}, one server process spends ${formatNumber(cpu)} ms of CPU per request, so one event loop answers at ` +
        `most ~${formatNumber(1000 / cpu)} requests/s; with ${connections} requests always in flight each waits behind the others, ` +
        `p50 ≈ ${connections} × ${formatNumber(cpu)} ms = ${formatNumber(connections * cpu)} ms when it has a core to itself ` +
        `(measured: ${formatNumber(p50)} ms). catalogue.search alone takes ${formatNumber(1000 / b.search.median)} ms in-process, but ` +
        'a request the server answered before takes its page from the coverage page cache (every measured request of these ' +
        "settings: the bench repeats its points); the rest is HTTP parsing and writing, the coverage lane's checks, " +
        'authentication and the AES-GCM token.',
    );
    const uncached = raw.settings.workers.find((w) => w.endsWith(':no-cache'));
    if (uncached) {
      const cost = http(largest, uncached, (h) => h.cpuMsPerRequest).median;
      out.push(
        `Without the page cache (${serverName(uncached)}), every request searches: ${formatNumber(cost)} ms of CPU per request at ` +
          `${label(largest.surveys)}, ${formatNumber(http(largest, uncached, (h) => h.requestsPerSecond).median)} req/s, p99 ` +
          `${formatNumber(http(largest, uncached, (h) => h.p99Ms).median)} ms: what a request for a place nobody asked about since ` +
          'the catalogue last changed costs.',
      );
    }
  }
  const profile = raw.profile;
  if (profile) {
    const share = (name: string, where = '') =>
      profile.summary.functions
        .filter((f) => f.name === name && f.where.includes(where))
        .reduce((sum, f) => sum + f.share, 0);
    const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
    const gc = profile.summary.origins.find((o) => o.name === '(garbage collector)')?.share ?? 0;
    out.push(
      `The profile at ${label(profile.surveys)}: ${pct(share('search', 'catalogue'))} of the busy time is in catalogue.search itself, ` +
        'nearly all of it SQLite (the R*Tree, the join, and turning each candidate row into JavaScript values: native time counts as ' +
        `the function that called it); ${pct(share('writev'))} is the writev system call that sends each answer (on loopback the ` +
        `kernel's TCP work for the receiving side happens inside it too); ${pct(share('toListing', 'catalogue'))} parsing listings; ` +
        `${pct(gc)} garbage collection. The rest, spread over many small functions, is Node's HTTP, the coverage lane, authentication and the token.`,
    );
  }
  const goalSize = raw.sizes.find((x) => x.surveys === GOAL_SURVEYS);
  for (const workers of raw.settings.workers.filter(deployed)) {
    const p99 = goalSize ? http(goalSize, workers, (h) => h.p99Ms).median : Number.NaN;
    if (!goalSize || !(p99 > GOAL_P99_MS)) continue;
    const p50 = http(goalSize, workers, (h) => h.p50Ms).median;
    const p90 = http(goalSize, workers, (h) => h.p90Ms).median;
    const cpu = http(goalSize, workers, (h) => h.cpuMsPerRequest).median;
    const load = raw.machine.loadStart[0]?.toFixed(1);
    const connections = raw.settings.connections;
    const spreadRatio = p99 / p50;
    const cpuNeeded = GOAL_P99_MS / spreadRatio / connections;
    const why =
      p50 > GOAL_P99_MS * 0.6
        ? `p50 is queueing (${connections} requests in flight × the CPU of one). With the tail this run had (p99 = ` +
          `${formatNumber(spreadRatio)} × p50), p99 <= ${GOAL_P99_MS} ms needs p50 <= ${formatNumber(GOAL_P99_MS / spreadRatio)} ms, ` +
          `so a request costing ${formatNumber(cpuNeeded)} ms of CPU at most; it costs ${formatNumber(cpu)} ms (${formatNumber(cpu / cpuNeeded)}x that).`
        : `Queueing fits in the budget; the tail is stalls, moments when the server waits for a core it shares with wrk and the machine's other work (load average ${load} at the start), and garbage-collection pauses, each of which delays every request in flight.`;
    out.push(
      `Missed: p99 at 1M surveys, ${serverName(workers)}: ${formatNumber(p99)} ms, ${formatNumber(p99 - GOAL_P99_MS)} ms over ` +
        `(p50 ${formatNumber(p50)} ms, p90 ${formatNumber(p90)} ms). ${why}`,
    );
  }
  return out;
}

function conditions(raw: CoverageRaw): string[] {
  const { machine, settings } = raw;
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  return [
    `Machine: ${machine.cpus} cores (${machine.model}), ${machine.memoryGb.toFixed(1)} GiB RAM; load average ${load(machine.loadStart)} at the start and ${load(machine.loadEnd)} at the end (1/5/15 min). wrk and the servers share the cores.`,
    `Software: Node ${raw.versions.node}, SQLite ${raw.versions.sqlite} (better-sqlite3), ${raw.versions.wrk}.`,
    `Servers: the real \`nadir serve\` (compiled, bin/nadir), NADIR_LOG_LEVEL=warn, the catalogue file as its database; ${settings.workers.map(serverName).join(' and ')} (auto: one process per core). Each request authenticates the key, gets the page (a search, or the coverage page cache, NADIR_COVERAGE_CACHE_MB=64 per process, when the same request was answered since the catalogue last changed) and encrypts a transaction token of its own.`,
    `Request: \`${raw.request}\` (a 100 m square AOI, default limit 20), ${formatNumber(settings.points)} distinct points per catalogue, round robin.`,
    `Load: wrk, ${settings.connections} keep-alive connections on one thread (a second would only take CPU from the server), closed loop; warm-up runs of ${settings.warmupSeconds} s thrown away (a new server's until one run has gone through every point, twice per process with workers: first touches of a large file's pages are page faults, and each process has its own page cache), then ${settings.seconds} s measured; every answer checked to be 200. Floors: ${settings.floorSeconds} s each after a warm-up, one caller.`,
    `Rounds: ${settings.rounds}; in each, every catalogue size in turn (the order reversed every other round), each server setting in turn. Warm caches: before each size's turn the database file is read through once (this machine evicts file pages left idle), and the server's warm-up run touches the same points.`,
    'Catalogue: synthetic and seeded (bench/coverage/catalogue.ts), shaped like a national programme: flight blocks (irregular octagons 2-5 km across, ~16 km²) flown again and again over towns and cities (discs of 3-10 km radius, each point flown 4-40 times over 2010-2025), one city per ~50 x 50 km of an otherwise empty region that grows with the archive (centred in Australia; the table gives its size). 70% of the post-2016 surveys carry TrueOrtho and DetailDsm. Query points: 90% within 1 km of a random survey (busy cities get most requests), 10% anywhere in the region.',
    'Catalogues are built once through `catalogue.put` in one transaction, then ANALYZE, and cached in bench/work/coverage (`--fresh` rebuilds them).',
  ];
}

/** How the coverage answer got to today's figures (moved here from docs/architecture.md, issue 33). */
const HISTORY: string[] = [
  "The lane (the coverage lane, api/coverage/coverage-lane.ts) answers the common request before fastify: at 1M surveys, fastify's routing, hooks and reply machinery were a third of an answer's cost before it existed (docs/benchmarks-coverage.md).",
  "The p99 with `NADIR_WORKERS=auto` (two processes on 2 cores beside wrk's two threads) is a matter of what else runs when an answer is due. On 2026-11-26, before the changes below, it moved between 3.5 and 7.7 ms from one 8 s run to the next (median about 5 ms): each worker ran about 14 young-generation collections a second of about 2 ms each, each delaying the eight or so requests it had in flight. Measured with V8's `--trace-gc-nvp` and its sampling heap profiler, an answer allocated about 20 KB, and a collection's pause was mostly fixed costs, not survivors (about 200 KB survived each):\n- the body, a string, was copied twice more per answer: flattened to count its bytes for Content-Length, then joined to the header and flattened again when written. The page cache now keeps the body up to the token as bytes in memory of their own (survey-json.ts), and an answer writes that buffer and its token's few characters in one writev;\n- each token made a Cipheriv: a JavaScript object with a native one behind it, whose weak handle every young collection had to process (a third of each pause), and three Buffers with memory of their own. native/token-seal seals with the same OpenSSL (Node's own; nothing to link) into two buffers the codec keeps: 0.6 us a token against 3.5 us, no object per token, the bytes node:crypto makes (test/tokens/aes-gcm.test.ts);\n- PRAGMA data_version, the catalogue's change marker, was asked per answer: three system calls, 6 us each time under load. It is now asked once per turn of the event loop, as the tile path and the account store already did.",
  "Together: 0.067-0.073 ms of CPU an answer with workers instead of 0.11 (one process: 12,700 answers a second instead of 8,300), collections of 0.8 ms instead of 1.5, and p99 over six 8 s runs alone between 2.9 and 4.8 ms (median 3.5). In the benchmark's report run (twelve servers alive, measured in turns) the three rounds at 1M gave 4.70-5.41 ms, 4.97 ms their median: the goal is met there by a hair, and a run can still miss it. What is left of the tail is the two cores: each worker's event loop waits for a core for 20-35% of the time it is ready to run (/proc's schedstat), and node:cluster's round robin often splits wrk's 16 connections 7/10 or 6/11 (no run-to-run link to the p99 showed in eight runs). Tried and dropped, no change beyond the spread: a 64 MiB semi-space and V8's parallel scavenge turned off (before and after these changes), and a short EEVDF slice for the workers' event loops (before).",
];

export function coverageSection(raw: CoverageRaw): Section {
  const profile = profileTable(raw);
  return {
    id: 'coverage',
    title: 'Coverage',
    conditions: conditions(raw),
    goals: goals(raw),
    tables: [httpTable(raw), floorTable(raw), catalogueTable(raw), ...(profile ? [profile] : [])],
    charts: charts(raw),
    findings: findings(raw),
    history: HISTORY,
    raw,
  };
}
