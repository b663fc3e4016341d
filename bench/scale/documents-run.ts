/**
 * Documents at catalogue scale (issue 32): WMTS capabilities, TileJSON, the STAC collection and
 * STAC pages over 100,000 surveys with 1,000 distinct tags (documents-catalogue.ts), on SQLite and
 * on PostgreSQL + PostGIS. Each document cold (the first answer of a fresh server) and warm (the
 * median of `rounds` more), its size, the CPU per answer and the longest the event loop was held;
 * a walk to the end of the catalogue by `next` links; and, as the in-run reference, the old ways
 * on the same catalogue: a page at offset 10,000 (offset paging reads what it skips) and the
 * newest 10,000 surveys read to describe a layer (what extents cost before the maintained groups).
 *
 * The server runs in this process (createServices + buildServer, as `nadir serve` does), so the
 * event loop that is watched is the server's; the client's own share of it is small (one request
 * at a time, bodies read as bytes).
 */
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildServer } from '../../src/api/server.js';
import { systemClock } from '../../src/cli/system-clock.js';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { startPostgres } from '../../test/support/servers.js';
import { removeScratch, scratchDir } from '../load/processes.js';
import type { SectionOptions } from '../report/section.js';
import { cachedDocumentsCatalogue, taggedSurveys } from './documents-catalogue.js';
import type {
  DocumentEngine,
  DocumentSettings,
  DocumentsRaw,
  DocumentTiming,
  EngineDocuments,
  WalkFigures,
} from './documents-raw.js';
import { loadPostgresSurveys } from './postgres-catalogue.js';

export function documentSettings(quick: boolean): DocumentSettings {
  return quick
    ? { surveys: 100_000, tags: 1000, rounds: 5, pageLimit: 1000 }
    : { surveys: 100_000, tags: 1000, rounds: 15, pageLimit: 100 };
}

/** The documents timed, by name: a path under the server. */
const DOCUMENTS: [string, string][] = [
  ['WMTS capabilities', '/wmts/1.0.0/WMTSCapabilities.xml'],
  ['WMTS capabilities, since=2024-01-01', '/wmts/1.0.0/WMTSCapabilities.xml?since=2024-01-01'],
  ['WMTS capabilities, include=disaster0', '/wmts/1.0.0/WMTSCapabilities.xml?include=disaster0'],
  ['TileJSON Vert', '/tiles/v3/Vert/tilejson.json'],
  ['TileJSON Vert, include=project1', '/tiles/v3/Vert/tilejson.json?include=project1'],
  ['STAC collection', '/stac/v1/collections/surveys'],
  ['STAC search, first page (10)', '/stac/v1/search?limit=10'],
  ['STAC search, a city (bbox)', '/stac/v1/search?limit=10&bbox=133.9,-25.3,134.3,-24.9'],
  ['STAC search, half the region (bbox)', '/stac/v1/search?limit=10&bbox=100,-60,134,10'],
  ['STAC search, one year (datetime)', '/stac/v1/search?limit=10&datetime=2015-01-01T00:00:00Z/2015-12-31T23:59:59Z'],
  ['STAC items, first page (100)', '/stac/v1/collections/surveys/items?limit=100'],
];

interface Client {
  base: string;
  key: string;
  monitor: ReturnType<typeof monitorEventLoopDelay>;
}

/** One answer: its time and bytes (the body read whole); a non-200 stops the run. */
async function ask(client: Client, path: string): Promise<{ ms: number; bytes: number; body: Buffer }> {
  const url = new URL(path, client.base);
  url.searchParams.set('apikey', client.key);
  const started = performance.now();
  const response = await fetch(url);
  const body = Buffer.from(await response.arrayBuffer());
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${body.toString('utf8').slice(0, 300)}`);
  return { ms, bytes: body.length, body };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function timeDocument(client: Client, name: string, path: string, rounds: number): Promise<DocumentTiming> {
  client.monitor.reset();
  const cpu = process.cpuUsage();
  const cold = await ask(client, path);
  const warm: number[] = [];
  for (let i = 0; i < rounds; i++) warm.push((await ask(client, path)).ms);
  const used = process.cpuUsage(cpu);
  return {
    name,
    path,
    coldMs: cold.ms,
    warmMs: median(warm),
    maxMs: Math.max(...warm),
    bytes: cold.bytes,
    cpuMs: (used.user + used.system) / 1000 / (rounds + 1),
    blockMs: client.monitor.max / 1e6,
  };
}

/** Every page of the search by `next` links, to the end. */
async function walkToTheEnd(client: Client, limit: number): Promise<WalkFigures> {
  client.monitor.reset();
  const times: number[] = [];
  let items = 0;
  let path: string | undefined = `/stac/v1/search?limit=${limit}`;
  const started = performance.now();
  while (path) {
    const page = await ask(client, path);
    times.push(page.ms);
    const json = JSON.parse(page.body.toString('utf8')) as {
      features: unknown[];
      links: { rel: string; href: string }[];
    };
    items += json.features.length;
    const next = json.links.find((link) => link.rel === 'next')?.href;
    path = next ? `${new URL(next).pathname}${new URL(next).search}` : undefined;
  }
  const tenth = Math.max(1, Math.floor(times.length / 10));
  const tenths = Array.from({ length: Math.ceil(times.length / tenth) }, (_, i) =>
    median(times.slice(i * tenth, (i + 1) * tenth)),
  );
  return {
    pages: times.length,
    items,
    seconds: (performance.now() - started) / 1000,
    medianPageMs: median(times),
    p99PageMs: [...times].sort((a, b) => a - b)[Math.floor(times.length * 0.99)] ?? Number.NaN,
    maxPageMs: Math.max(...times),
    firstTenthMs: tenths[0] ?? Number.NaN,
    lastTenthMs: tenths.at(-1) ?? Number.NaN,
    slowestTenthMs: Math.max(...tenths),
    blockMs: client.monitor.max / 1e6,
  };
}

/** The old way of describing a layer: the newest 10,000 surveys, read through the catalogue. */
async function timeNewestSurveys(services: Services, client: Client, rounds: number): Promise<DocumentTiming> {
  client.monitor.reset();
  const read = async () => {
    const started = performance.now();
    const page = await services.catalogue.search({
      area: { minX: -180, minY: -90, maxX: 180, maxY: 90 },
      types: ['Vert'],
      limit: 10_000,
      offset: 0,
    });
    return { ms: performance.now() - started, bytes: page.surveys.length };
  };
  const cpu = process.cpuUsage();
  const cold = await read();
  const warm: number[] = [];
  for (let i = 0; i < Math.min(rounds, 5); i++) warm.push((await read()).ms);
  const used = process.cpuUsage(cpu);
  return {
    name: 'before: the newest 10,000 surveys read to describe a layer (catalogue.search)',
    path: '',
    coldMs: cold.ms,
    warmMs: median(warm),
    maxMs: Math.max(...warm),
    bytes: 0,
    cpuMs: (used.user + used.system) / 1000 / (warm.length + 1),
    blockMs: client.monitor.max / 1e6,
  };
}

async function measureEngine(
  engine: DocumentEngine,
  database: string,
  settings: DocumentSettings,
  loadSeconds: number | undefined,
  log: (line: string) => void,
): Promise<EngineDocuments> {
  const dataDir = await scratchDir(`documents-${engine}`);
  const config = parseConfig({ NADIR_DATA_DIR: dataDir, NADIR_DATABASE: database, NADIR_LOG_LEVEL: 'warn' }, dataDir);
  const services = await createServices(config, systemClock);
  const app = await buildServer(services);
  const monitor = monitorEventLoopDelay({ resolution: 1 });
  try {
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const account = await services.accounts.createAccount({
      // The SQLite catalogue file is kept between runs, and with it the accounts of earlier runs.
      name: `documents-${Date.now().toString(36)}`,
      rasterSubscription: true,
      monthlyAllowance: 100,
    });
    await services.accounts.setTileRateLimit(account.id, 1_000_000, 60);
    const key = (await services.accounts.issueApiKey(account.id)).key;
    // The process's first request pays fastify's own lazy start (80 ms here, whatever is asked):
    // a /health first, so the cold figures are each document's own.
    await (await fetch(`${base}/health`)).arrayBuffer();
    monitor.enable();
    const client: Client = { base, key, monitor };
    const groups = (await services.catalogue.groups({ tags: 'all' })).length;
    const timings: DocumentTiming[] = [];
    for (const [name, path] of DOCUMENTS) {
      const timing = await timeDocument(client, name, path, settings.rounds);
      log(
        `${engine} ${name}: cold ${timing.coldMs.toFixed(1)} ms, warm ${timing.warmMs.toFixed(1)} ms, ${(timing.bytes / 1024).toFixed(0)} KiB, block ${timing.blockMs.toFixed(1)} ms`,
      );
      timings.push(timing);
    }
    const walk = await walkToTheEnd(client, settings.pageLimit);
    log(
      `${engine} walk: ${walk.pages} pages of ${settings.pageLimit} in ${walk.seconds.toFixed(1)} s, median ${walk.medianPageMs.toFixed(1)} ms, first tenth ${walk.firstTenthMs.toFixed(1)}, last tenth ${walk.lastTenthMs.toFixed(1)}`,
    );
    const references = [
      await timeDocument(
        client,
        'before: offset paging, a page at offset 10,000',
        '/stac/v1/search?limit=10&offset=10000',
        settings.rounds,
      ),
      await timeNewestSurveys(services, client, settings.rounds),
    ];
    for (const r of references)
      log(`${engine} ${r.name}: cold ${r.coldMs.toFixed(1)} ms, warm ${r.warmMs.toFixed(1)} ms`);
    return { engine, loadSeconds, groups, timings, walk, references };
  } finally {
    monitor.disable();
    await app.close();
    await services.close();
    await removeScratch(dataDir);
  }
}

export async function measureDocuments(options: SectionOptions): Promise<DocumentsRaw> {
  const settings = documentSettings(options.quick);
  const log = (line: string) => options.log(`scale-documents: ${line}`);
  const started = Date.now();
  const loadStart = loadavg();
  const sqlite = await cachedDocumentsCatalogue(settings.surveys, settings.tags, options.fresh);
  log(`SQLite ${sqlite.buildSeconds === undefined ? 'reused' : `built in ${sqlite.buildSeconds.toFixed(0)} s`}`);
  const engines = [await measureEngine('sqlite', sqlite.path, settings, sqlite.buildSeconds, log)];
  const postgres = await startPostgres();
  const scratch = await scratchDir('documents-pg');
  try {
    const url = await postgres.createDatabase('documents');
    const loading = performance.now();
    await loadPostgresSurveys(url, scratch, taggedSurveys(settings.surveys, settings.tags), settings.surveys, log);
    const loadSeconds = (performance.now() - loading) / 1000;
    log(`PostgreSQL loaded in ${loadSeconds.toFixed(0)} s`);
    engines.push(await measureEngine('postgres', url, settings, loadSeconds, log));
  } finally {
    await removeScratch(scratch);
    await postgres.stop();
  }
  return {
    settings,
    machine: { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown', loadStart, loadEnd: loadavg() },
    engines,
    seconds: (Date.now() - started) / 1000,
  };
}
