/**
 * Coverage benchmark (issue #6): requests/s and latency of GET /staticmap/v2/coverage.json on the
 * real `nadir serve` over catalogues of 1k, 10k, 100k and 1M synthetic surveys (the cost-growth
 * curve), driven by wrk at 16 keep-alive connections, next to the in-process floors (the raw SQL
 * statement, and catalogue.search) on the same file and the same points. Sizes take turns within
 * each round, the order reversed every other round; medians over rounds, min-max as the spread.
 */
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { aoiLonLatBounds } from '../../src/geo/aoi.js';
import type { SectionOptions } from '../report/section.js';
import { cachedCatalogue, queryPoints } from './catalogue.js';
import { type Floor, openFloor } from './floor.js';
import {
  checkAgreement,
  type HttpFigures,
  measureHttp,
  type Prepared,
  profileLargest,
  RADIUS,
  RESOURCES,
  readThrough,
} from './http.js';
import type { CoverageRaw, CoverageSettings, SizeResult } from './raw.js';
import { type CoverageServer, startCoverageServer } from './server.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
export const WORK = join(ROOT, 'bench/work/coverage');

export function coverageSettings(quick: boolean, overrides: Partial<CoverageSettings> = {}): CoverageSettings {
  const base: CoverageSettings = quick
    ? {
        sizes: [1e3, 1e4, 1e5, 1e6],
        rounds: 1,
        seconds: 3,
        warmupSeconds: 1,
        floorSeconds: 2,
        connections: 16,
        points: 5000,
        workers: ['1'],
        profile: false,
      }
    : {
        sizes: [1e3, 1e4, 1e5, 1e6],
        rounds: 3,
        seconds: 8,
        warmupSeconds: 2,
        floorSeconds: 4,
        connections: 16,
        points: 10_000,
        // The bench repeats its points, so the first two answer from the coverage page cache;
        // the third shows what a request costs when it must search.
        workers: ['1', 'auto', '1:no-cache'],
        profile: true,
      };
  const given = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  return { ...base, ...given };
}

async function versions(): Promise<Record<string, string>> {
  // wrk --version prints its version and exits 1.
  const wrk = await run('wrk', ['--version']).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
  return { node: process.version, wrk: wrk.stdout.split(' Copyright')[0]?.trim() ?? '' };
}

/** Measures; bench/coverage/report.ts words the figures. */
export async function measureCoverage(
  options: SectionOptions,
  overrides: Partial<CoverageSettings> = {},
): Promise<CoverageRaw> {
  const settings = coverageSettings(options.quick, overrides);
  const log = (line: string) => options.log(`coverage: ${line}`);
  const started = Date.now();
  const loadStart = loadavg();
  // The server runs the compiled CLI, as deployed; the floors import the same compiled modules.
  await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: ROOT });

  const prepared: Prepared[] = [];
  for (const surveys of settings.sizes) {
    const catalogue = await cachedCatalogue(WORK, surveys, options.fresh);
    const points = queryPoints(catalogue.layout, settings.points);
    const areas = points.map(([lon, lat]) => aoiLonLatBounds({ lon, lat, radius: RADIUS }));
    log(`${surveys} surveys: ${catalogue.built ? `built in ${catalogue.buildSeconds?.toFixed(1)} s` : 'reused'}`);
    prepared.push({ surveys, ...catalogue, points, areas });
  }

  const servers: Record<string, CoverageServer>[] = [];
  const floors: Floor[] = [];
  try {
    const sizes: SizeResult[] = [];
    for (const p of prepared) {
      const bySetting: Record<string, CoverageServer> = {};
      servers.push(bySetting);
      for (const workers of settings.workers)
        bySetting[workers] = await startCoverageServer({ database: p.path, workers });
      const floor = await openFloor(p.path, [...RESOURCES]);
      floors.push(floor);
      for (const server of Object.values(bySetting)) await checkAgreement(server, p, floor);
      const matches = await floor.matches(p.areas.slice(0, 2000));
      const { cities, halfLat } = p.layout;
      log(`${p.surveys}: ${cities.length} cities, ${matches.mean.toFixed(1)} matches per query, p90 ${matches.p90}`);
      sizes.push({
        surveys: p.surveys,
        databaseMb: statSync(p.path).size / 2 ** 20,
        buildSeconds: p.buildSeconds,
        cities: cities.length,
        regionKm: 2 * halfLat * 111.32,
        matches,
        rounds: [],
      });
    }
    for (let round = 0; round < settings.rounds; round++) {
      const order = prepared.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order) {
        const p = prepared[i] as Prepared;
        // The machine evicts file pages idle for a while: every measurement starts from a cached file.
        await readThrough(p.path);
        const http: Record<string, HttpFigures> = {};
        const configs = round % 2 === 1 ? [...settings.workers].reverse() : settings.workers;
        for (const workers of configs) {
          http[workers] = await measureHttp(
            (servers[i] as Record<string, CoverageServer>)[workers] as CoverageServer,
            p,
            settings,
          );
        }
        const floor = floors[i] as Floor;
        const sql = await floor.sql(p.areas, settings.floorSeconds);
        const search = await floor.search(p.areas, settings.floorSeconds);
        (sizes[i] as SizeResult).rounds.push({ round, http, sql, search });
        const said = Object.entries(http).map(
          ([w, h]) =>
            `HTTP(${w}) ${h.requestsPerSecond.toFixed(0)} req/s p99 ${h.p99Ms.toFixed(1)} ms ${h.cpuMsPerRequest.toFixed(2)} ms CPU`,
        );
        log(
          `round ${round + 1} ${p.surveys}: ${said.join('; ')}; search ${search.perSecond.toFixed(0)} q/s; SQL ${sql.perSecond.toFixed(0)} q/s`,
        );
      }
    }
    for (const bySetting of servers.splice(0)) for (const server of Object.values(bySetting)) await server.stop();
    const largest = prepared.at(-1);
    const profile = settings.profile && largest ? await profileLargest(largest, settings, log) : undefined;
    const raw: CoverageRaw = {
      settings,
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model.trim() ?? 'unknown',
        memoryGb: totalmem() / 2 ** 30,
        loadStart,
        loadEnd: loadavg(),
      },
      versions: { ...(await versions()), sqlite: floors[0]?.sqliteVersion ?? '' },
      request: `GET /staticmap/v2/coverage.json?apikey=...&point=<lon>,<lat>&radius=${RADIUS}&resources=${RESOURCES.join(',')}`,
      sizes,
      profile,
      seconds: (Date.now() - started) / 1000,
    };
    return raw;
  } finally {
    for (const bySetting of servers) for (const server of Object.values(bySetting)) await server.stop();
    for (const floor of floors) floor.close();
  }
}
