/**
 * What Prometheus metrics cost (issue 36, item 5): the same `nadir serve` with metrics off and on
 * (NADIR_METRICS_PORT), side by side on the same data, for the two answers that are cheapest and
 * so feel a fixed cost most: pass-through tiles (the tile lane) and coverage answers (the coverage
 * lane, from its page cache). The figure is CPU time of the server's process per answer, which a
 * busy machine barely moves (throughput it moves a lot); the servers take turns in every round,
 * each first, second and third as often, so a change in the machine's load falls on all. A third
 * server, metrics off like the first, is the control: two equal servers differ by this machine's
 * noise alone, and what on differs from off by means something only beyond that.
 * While metrics are on, /metrics is scraped every few seconds, as Prometheus would.
 */
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { COVERAGE_PATH } from '../../src/api/coverage/coverage-route.js';
import { LOCATION_TILE_PATH } from '../../src/api/tiles/tile-route.js';
import { cachedCatalogue, queryPoints } from '../coverage/catalogue.js';
import { coverageUrl, RADIUS, RESOURCES } from '../coverage/http.js';
import { sampleCpu } from '../load/cpu.js';
import { issueBenchKey, type NadirServe, startNadirServe } from '../load/nadir-serve.js';
import { freePort, removeScratch, scratchDir } from '../load/processes.js';
import { assertAllStatus, runWrk } from '../load/wrk.js';
import type { SectionOptions } from '../report/section.js';
import { tileData } from '../tiles/data.js';
import { findTileLists, nadirTileUrl } from '../tiles/tile-lists.js';
import type { MetricsRaw, MetricsRound, MetricsRun, MetricsSettings } from './raw.js';
import { measureSeams } from './seams.js';

const ROOT = join(import.meta.dirname, '../..');

export function metricsSettings(quick: boolean): MetricsSettings {
  return quick
    ? {
        rounds: 2,
        seconds: 3,
        warmupSeconds: 1,
        connections: 16,
        tiles: 300,
        coverageSurveys: 1e4,
        coveragePoints: 2000,
        scrapeEverySeconds: 5,
      }
    : {
        // Many short turns rather than a few long ones: the machine's load drifts by more than
        // the difference measured, and a turn's ratio only sees the drift within it.
        rounds: 10,
        seconds: 4,
        warmupSeconds: 1,
        connections: 16,
        tiles: 300,
        coverageSurveys: 1e4,
        coveragePoints: 5000,
        scrapeEverySeconds: 5,
      };
}

/** A server of the pair: metrics off, or on with its /metrics port. */
interface Contender {
  server: NadirServe;
  metricsUrl?: string;
  /** Requests wrk saw answered by it, warm-ups included. */
  answered: number;
}

type Which = 'off' | 'on' | 'control';
type Trio = Record<Which, Contender>;

/**
 * The servers compared: metrics off, metrics on, and a control, off like the first: what the
 * control differs from `off` by is what this machine's noise alone makes of two equal servers.
 */
async function startTrio(env: NodeJS.ProcessEnv, label: string): Promise<Trio> {
  const port = await freePort();
  const envs: Record<Which, NodeJS.ProcessEnv> = {
    off: env,
    on: { ...env, NADIR_METRICS_PORT: `${port}`, NADIR_METRICS_HOST: '127.0.0.1' },
    control: env,
  };
  const started: Partial<Trio> = {};
  try {
    for (const which of ['off', 'on', 'control'] as const) {
      started[which] = { server: await startNadirServe({ env: envs[which], label: `${label}-${which}` }), answered: 0 };
    }
  } catch (error) {
    await stopTrio(started);
    throw error;
  }
  (started.on as Contender).metricsUrl = `http://127.0.0.1:${port}/metrics`;
  return started as Trio;
}

async function stopTrio(trio: Partial<Trio>): Promise<void> {
  for (const contender of Object.values(trio)) await contender?.server.stop();
}

/** The three in turns, each first, second and third as often (round by round). */
const ORDERS: readonly (readonly Which[])[] = [
  ['off', 'on', 'control'],
  ['on', 'control', 'off'],
  ['control', 'off', 'on'],
  ['off', 'control', 'on'],
  ['on', 'off', 'control'],
  ['control', 'on', 'off'],
];

/** A warm-up run thrown away, then the measured one with the process's CPU time over it. */
async function measure(contender: Contender, urls: string[], settings: MetricsSettings, label: string) {
  const pid = contender.server.child.pid as number;
  const common = { urls, connections: settings.connections, threads: 1 };
  const warm = await runWrk({ ...common, seconds: settings.warmupSeconds });
  contender.answered += warm.requests;
  const scrape = contender.metricsUrl;
  const scraper = scrape
    ? setInterval(() => void fetch(scrape).then((r) => r.text()), settings.scrapeEverySeconds * 1000)
    : undefined;
  try {
    const before = await sampleCpu([pid]);
    const result = await runWrk({ ...common, seconds: settings.seconds });
    const after = await sampleCpu([pid]);
    contender.answered += result.requests;
    assertAllStatus(result, 200, label);
    return {
      requests: result.requests,
      requestsPerSecond: result.requestsPerSecond,
      cpuMsPerAnswer: (after.totalMs - before.totalMs) / result.requests,
    } satisfies MetricsRun;
  } finally {
    clearInterval(scraper);
  }
}

async function rounds(
  trio: Trio,
  urls: Record<Which, string[]>,
  settings: MetricsSettings,
  kind: string,
  log: (line: string) => void,
): Promise<MetricsRound[]> {
  // Every URL twice on each server first: its caches (a pass-through answer is remembered from
  // its second request, a coverage page from its first) then hold what the rounds ask for.
  for (const which of ['off', 'on', 'control'] as const) {
    for (let pass = 0; pass < 2; pass++) {
      // wrk waits out `seconds` even once its list is done: long enough for the list at 500/s.
      const warm = await runWrk({
        urls: urls[which],
        connections: settings.connections,
        threads: 1,
        seconds: Math.max(3, Math.ceil(urls[which].length / 500)),
        once: true,
      });
      trio[which].answered += warm.requests;
    }
  }
  const measured: MetricsRound[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    const runs: Partial<Record<Which, MetricsRun>> = {};
    for (const which of ORDERS[round % ORDERS.length] as readonly Which[])
      runs[which] = await measure(trio[which], urls[which], settings, `${kind} metrics ${which}`);
    const { off, on, control } = runs as Record<Which, MetricsRun>;
    measured.push({ round, off, on, control });
    const percent = (run: MetricsRun) => ((run.cpuMsPerAnswer / off.cpuMsPerAnswer - 1) * 100).toFixed(1);
    log(
      `${kind} round ${round + 1}: off ${off.cpuMsPerAnswer.toFixed(4)} ms CPU per answer, on ${percent(on)}%, control (off too) ${percent(control)}%`,
    );
  }
  return measured;
}

/** The sum of one counter's series for `route` in a scrape. */
async function countedFor(metricsUrl: string, route: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('nadir_http_requests_total{') && line.includes(`route="${route}"`)) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

export async function measureMetrics(options: SectionOptions): Promise<MetricsRaw> {
  const settings = metricsSettings(options.quick);
  const log = (line: string) => options.log(`metrics: ${line}`);
  const started = Date.now();
  const loadStart = loadavg();
  const seams = await measureSeams();
  log(
    `recording per answer, in process: HTTP ${seams.httpNs.toFixed(0)} ns, tile observer ${seams.tileObserverNs.toFixed(0)} ns`,
  );
  const kinds: MetricsRaw['kinds'] = [];
  const counted: MetricsRaw['counted'] = [];

  const data = await tileData({ fresh: options.fresh, log });
  const tilesEnv = { NADIR_DATA_DIR: data.dataDir };
  // The tiles are found by a server of their own: one of the pair would otherwise start with
  // caches (and a heap) full of the scan's other tiles, and answer differently for that alone.
  const listRoot = await scratchDir('metrics-tile-list');
  const scout = await startNadirServe({ env: tilesEnv, label: 'metrics-scout' });
  const lists = await findTileLists(scout.url, data, listRoot, settings.tiles).finally(async () => {
    await scout.stop();
    await removeScratch(listRoot);
  });
  const tilePair = await startTrio(tilesEnv, 'metrics-tiles');
  try {
    const urls = (server: NadirServe) => lists.passThrough.map((t) => nadirTileUrl(server.url, data.apiKey, t, 'jpg'));
    // wrk asks one origin: each server its own list of the same tiles.
    const both = {
      off: urls(tilePair.off.server),
      on: urls(tilePair.on.server),
      control: urls(tilePair.control.server),
    };
    kinds.push({
      kind: 'pass-through tiles',
      request: 'GET /tiles/v3/Vert/{z}/{x}/{y}.jpg?apikey=... (stored tiles, the tile lane)',
      rounds: await rounds(tilePair, both, settings, 'pass-through tiles', log),
    });
    const on = tilePair.on;
    counted.push({
      kind: 'pass-through tiles',
      answered: on.answered,
      counted: await countedFor(on.metricsUrl as string, LOCATION_TILE_PATH),
    });
  } finally {
    await stopTrio(tilePair);
  }

  const catalogue = await cachedCatalogue(join(ROOT, 'bench/work/coverage'), settings.coverageSurveys, options.fresh);
  const dataDir = await scratchDir('metrics-coverage');
  try {
    const env = { NADIR_DATA_DIR: dataDir, NADIR_DATABASE: catalogue.path };
    const apiKey = await issueBenchKey(env, 'metrics');
    const coveragePair = await startTrio(env, 'metrics-coverage');
    try {
      const points = queryPoints(catalogue.layout, settings.coveragePoints);
      const urls = (server: NadirServe) => points.map((p) => coverageUrl({ url: server.url, apiKey }, p));
      const both = {
        off: urls(coveragePair.off.server),
        on: urls(coveragePair.on.server),
        control: urls(coveragePair.control.server),
      };
      kinds.push({
        kind: 'coverage',
        request: `GET ${COVERAGE_PATH}?apikey=...&point=<lon>,<lat>&radius=${RADIUS}&resources=${RESOURCES.join(',')} (${settings.coverageSurveys} surveys, the coverage lane)`,
        rounds: await rounds(coveragePair, both, settings, 'coverage', log),
      });
      const on = coveragePair.on;
      counted.push({
        kind: 'coverage',
        answered: on.answered,
        counted: await countedFor(on.metricsUrl as string, COVERAGE_PATH),
      });
    } finally {
      await stopTrio(coveragePair);
    }
  } finally {
    await removeScratch(dataDir);
  }

  return {
    settings,
    machine: { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown', loadStart, loadEnd: loadavg() },
    kinds,
    counted,
    seams,
    seconds: (Date.now() - started) / 1000,
  };
}
