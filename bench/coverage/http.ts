/**
 * The coverage benchmark's HTTP side: one server driven by wrk (warm-up, then a measured run with
 * the server's CPU time), the check that a server and the in-process floor see the same catalogue,
 * and a profiled run.
 */
import { open, rm } from 'node:fs/promises';
import type { Bounds } from '../../src/geo/web-mercator.js';
import { scratchDir } from '../load/processes.js';
import { summariseProfiles } from '../load/profile.js';
import { assertAllStatus, runWrk, type WrkResult } from '../load/wrk.js';
import type { SyntheticCatalogue } from './catalogue.js';
import type { Floor } from './floor.js';
import { type CoverageServer, startCoverageServer } from './server.js';

export const RADIUS = 50;
export const RESOURCES = ['TrueOrtho', 'DetailDsm'] as const;

/** One catalogue size, ready to measure. */
export interface Prepared {
  surveys: number;
  path: string;
  layout: SyntheticCatalogue;
  buildSeconds?: number;
  areas: Bounds[];
  points: [number, number][];
}

export type HttpFigures = Pick<
  WrkResult,
  'requestsPerSecond' | 'p50Ms' | 'p90Ms' | 'p99Ms' | 'maxMs' | 'requests' | 'statuses'
> & {
  /** CPU time of the server's processes per request, ms. */
  cpuMsPerRequest: number;
};

export function coverageUrl(server: Pick<CoverageServer, 'url' | 'apiKey'>, [lon, lat]: [number, number]): string {
  const point = `${lon.toFixed(7)},${lat.toFixed(7)}`;
  return `${server.url}/staticmap/v2/coverage.json?apikey=${server.apiKey}&point=${point}&radius=${RADIUS}&resources=${RESOURCES.join(',')}`;
}

export interface HttpSettings {
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

/** Servers warmed up already (a server is measured once per round, warmed once). */
const warmedUp = new WeakSet<CoverageServer>();

/**
 * wrk against one server: warm-up runs thrown away, then the measured run, with the CPU time the
 * server's processes used during it (per request, a figure a busy machine barely moves). A new
 * server is warmed up until one run has gone through every point (twice per process): its first
 * touch of each page of a large catalogue is a page fault, which costs more than the search itself,
 * and each process has its own coverage page cache, meeting about half of a pass's points. A run
 * counts alone: every wrk run starts again at the first point (wrk.ts), so short runs added up
 * kept warming the same first few thousand points.
 */
export async function measureHttp(
  server: CoverageServer,
  prepared: Prepared,
  settings: HttpSettings,
): Promise<HttpFigures> {
  const urls = prepared.points.map((p) => coverageUrl(server, p));
  // One wrk thread: 16 connections at a few thousand requests/s take a fraction of a core, and a
  // second thread would only compete with the server for the other one.
  const common = { urls, connections: settings.connections, threads: 1 };
  const target = urls.length * (server.processes > 1 ? 2 * server.processes : 1);
  let seconds = settings.warmupSeconds;
  // At least one run each time: other servers ran since this one was last measured.
  for (let runs = 0; settings.warmupSeconds > 0 && (runs === 0 || (!warmedUp.has(server) && runs < 10)); runs++) {
    const { requests } = await runWrk({ ...common, seconds });
    if (requests >= target) warmedUp.add(server);
    // Long enough for the whole pass at the rate just seen, with a margin; a minute at most.
    else seconds = Math.min(60, Math.ceil((1.3 * target * seconds) / Math.max(requests, 1)));
  }
  const cpuBefore = await server.cpuSeconds();
  const result = await runWrk({ ...common, seconds: settings.seconds });
  const cpuMsPerRequest = (((await server.cpuSeconds()) - cpuBefore) * 1000) / result.requests;
  assertAllStatus(result, 200, `coverage ${prepared.surveys}`);
  const { requestsPerSecond, p50Ms, p90Ms, p99Ms, maxMs, requests, statuses } = result;
  return { requestsPerSecond, p50Ms, p90Ms, p99Ms, maxMs, requests, statuses, cpuMsPerRequest };
}

/** The server and the floor must see the same catalogue: the first points' `total` from both. */
export async function checkAgreement(server: CoverageServer, prepared: Prepared, floor: Floor): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const response = await fetch(coverageUrl(server, prepared.points[i] as [number, number]));
    const body = (await response.json()) as { total?: number };
    const expected = (await floor.matches([prepared.areas[i] as Bounds])).mean;
    if (response.status !== 200 || body.total !== expected) {
      throw new Error(
        `coverage ${prepared.surveys}: the server answered ${response.status}, total ${body.total}; the floor ${expected}`,
      );
    }
  }
}

export async function profileLargest(prepared: Prepared, settings: HttpSettings, log: (line: string) => void) {
  const dir = await scratchDir('coverage-cpuprof');
  await readThrough(prepared.path);
  try {
    // One process: its profile is the whole server's.
    const server = await startCoverageServer({ database: prepared.path, workers: '1', cpuProfileDir: dir });
    let http: HttpFigures;
    try {
      http = await measureHttp(server, prepared, { ...settings, seconds: Math.max(settings.seconds, 5) });
    } finally {
      await server.stop();
    }
    const summary = await summariseProfiles(dir, 40);
    log(`profile at ${prepared.surveys}: ${http.requestsPerSecond.toFixed(0)} req/s under the profiler`);
    return { surveys: prepared.surveys, requestsPerSecond: http.requestsPerSecond, summary };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Reads the whole file once, so that its pages are in the page cache. */
export async function readThrough(path: string): Promise<void> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(8 << 20);
    while ((await file.read(buffer, 0, buffer.length)).bytesRead > 0);
  } finally {
    await file.close();
  }
}
