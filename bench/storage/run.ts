/**
 * Storage benchmark (issue 17, item 7): the same surveys read from a local folder (NADIR_STORAGE
 * unset: the data folder) and from object storage (NADIR_STORAGE=s3://bench/tiles on s3rver, the
 * test suite's S3 server), in the same run: pass-through and composite tiles on a fresh server
 * (cold: each tile once), pass-through tiles again under load (warm), and a 2000 px raster
 * download. What nadir fetches from the bucket is what s3rver counts it answered (its process
 * prints its totals when asked: test/support/s3rver-process.mjs), as a bucket's bill counts it.
 * NADIR_BENCH_BUCKET_DELAY_MS and NADIR_BENCH_BUCKET_MBPS put a proxy in front of s3rver that
 * makes it a bucket farther away (each answer that much later, its body no faster than that many
 * MB/s), for measuring by hand.
 */
import { readdir } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { DEMO_LOCATION } from '@nadir/demo-town';
import { parseConfig } from '../../src/config/config.js';
import { BLOCK_BYTES } from '../../src/storage/block-cache.js';
import { openStorage } from '../../src/storage/open-storage.js';
import { startS3 } from '../../test/support/servers.js';
import { cpuBetween, processCpuMs, sampleCpu } from '../load/cpu.js';
import { issueBenchKey, type NadirServe, startNadirServe } from '../load/nadir-serve.js';
import { removeScratch, scratchDir } from '../load/processes.js';
import { assertAllStatus, runWrk } from '../load/wrk.js';
import type { SectionOptions } from '../report/section.js';
import { type TileData, tileData } from '../tiles/data.js';
import { findTileLists, nadirTileUrl, pool, type TileLists } from '../tiles/tile-lists.js';
import { startDistantBucket } from './distant-bucket.js';
import type { Fetched, Measurement, StorageKind, StorageRaw, StorageSettings } from './raw.js';

const BUCKET = 'bench';
const PREFIX = 'tiles';
/** NADIR_STORAGE_CACHE_MB of the S3 server: the default, said here so the report can name it. */
const BLOCK_CACHE_MB = 64;
/** The raster AOI's radius, m: the largest the API takes, as in the raster part. */
const RADIUS = 100;

export function storageSettings(quick: boolean, overrides: Partial<StorageSettings> = {}): StorageSettings {
  const base: StorageSettings = quick
    ? {
        maxTiles: 100,
        coldConcurrency: 8,
        connections: 32,
        seconds: 3,
        rasterSize: 2000,
        rasterRounds: 1,
        warmRounds: 1,
        coldRounds: 1,
        cacheMb: 256,
      }
    : {
        maxTiles: 400,
        coldConcurrency: 8,
        connections: 64,
        seconds: 7,
        rasterSize: 2000,
        rasterRounds: 3,
        warmRounds: 3,
        // A cold pass lasts under half a second: on 2026-11-28 the S3 ÷ local ratio of cold
        // composites, median of 3 rounds, was 0.79x to 0.89x in four runs of one build.
        coldRounds: 5,
        cacheMb: 256,
      };
  return { ...base, ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) };
}

/** Every survey file of the data folder, uploaded under the same keys the catalogue holds. */
async function uploadSurveys(dataDir: string, env: NodeJS.ProcessEnv): Promise<number> {
  const storage = await openStorage(parseConfig(env, dataDir).storage);
  try {
    const files = (await readdir(join(dataDir, 'surveys'), { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name));
    for (const file of files) await storage.put(relative(dataDir, file), file);
    return files.length;
  } finally {
    await storage.close();
  }
}

/** What one storage kind needs: the server's environment and, for S3, the store's counts and process. */
interface Backend {
  kind: StorageKind;
  env: NodeJS.ProcessEnv;
  /** What the store has answered so far (S3): subtract two readings for one measurement. */
  answered?: () => Promise<Fetched>;
  storePid?: () => number | undefined;
}

/** Starts counting CPU time: the nadir server's processes and, for S3, the store's; the call returned reads what was spent. */
async function cpuMeter(server: NadirServe, backend: Backend): Promise<() => Promise<Measurement['cpuMs']>> {
  const group = [server.child.pid as number];
  const pid = backend.storePid?.();
  const nadir = await sampleCpu(group);
  const store = pid === undefined ? 0 : await processCpuMs(pid);
  return async () => ({
    nadir: cpuBetween(nadir, await sampleCpu(group)).totalMs,
    store: pid === undefined ? undefined : (await processCpuMs(pid)) - store,
  });
}

async function fetchedSince(backend: Backend, before: Fetched | undefined) {
  if (!backend.answered || !before) return undefined;
  const now = await backend.answered();
  return { requests: now.requests - before.requests, bytes: now.bytes - before.bytes };
}

/** `urls` once each, `concurrency` at a time, every answer a 200. */
async function coldPass(
  what: string,
  urls: string[],
  server: NadirServe,
  backend: Backend,
  concurrency: number,
): Promise<Measurement> {
  const before = await backend.answered?.();
  const cpu = await cpuMeter(server, backend);
  const started = performance.now();
  await pool(urls, concurrency, async (url) => {
    const response = await fetch(url);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${what} (${backend.kind}): ${response.status} for ${url}`);
  });
  const seconds = (performance.now() - started) / 1000;
  const cpuMs = await cpu();
  const count = urls.length;
  const fetched = await fetchedSince(backend, before);
  return {
    what,
    storage: backend.kind,
    count,
    seconds,
    perSecond: count / seconds,
    msEach: (seconds * 1000) / count,
    fetched,
    cpuMs,
  };
}

async function warmPassThrough(
  urls: string[],
  server: NadirServe,
  backend: Backend,
  s: StorageSettings,
): Promise<Measurement> {
  const before = await backend.answered?.();
  const cpu = await cpuMeter(server, backend);
  const result = await runWrk({ urls, connections: s.connections, seconds: s.seconds, threads: 2 });
  const cpuMs = await cpu();
  assertAllStatus(result, 200, `pass-through warm (${backend.kind})`);
  return {
    what: 'pass-through warm',
    storage: backend.kind,
    count: result.requests,
    seconds: result.seconds,
    perSecond: result.requestsPerSecond,
    msEach: result.p50Ms,
    fetched: await fetchedSince(backend, before),
    cpuMs,
  };
}

/** A transaction token for the demo town's centre, then its TrueOrtho at `size` px, `rounds` times in a row. */
async function rasterDownloads(server: NadirServe, apiKey: string, backend: Backend, s: StorageSettings) {
  const point = `${DEMO_LOCATION.lon},${DEMO_LOCATION.lat}`;
  const coverage = await fetch(
    `${server.url}/staticmap/v2/coverage.json?apikey=${apiKey}&point=${point}&radius=${RADIUS}&resources=TrueOrtho`,
  );
  const answer = (await coverage.json()) as { transactionToken?: string; surveys?: { id: string }[] };
  const survey = answer.surveys?.[0]?.id;
  if (!answer.transactionToken || !survey) throw new Error(`no demo survey at ${point}: ${JSON.stringify(answer)}`);
  const url =
    `${server.url}/staticmap/v2/surveys/${survey}/TrueOrtho.jpg?transactionToken=${answer.transactionToken}` +
    `&point=${point}&radius=${RADIUS}&size=${s.rasterSize}x${s.rasterSize}`;
  return coldPass('raster', Array(s.rasterRounds).fill(url), server, backend, 1);
}

interface Started {
  backend: Backend;
  server: NadirServe;
  urls: string[];
}

/** A fresh server of one storage kind (cold: nothing read yet) and the URLs of its pass-through tiles. */
async function startFresh(backend: Backend, data: TileData, lists: TileLists, s: StorageSettings): Promise<Started> {
  const env = { ...backend.env, NADIR_DATA_DIR: data.dataDir, NADIR_TILE_CACHE_MB: `${s.cacheMb}` };
  const server = await startNadirServe({ env, label: `storage-${backend.kind}` });
  return { backend, server, urls: lists.passThrough.map((t) => nadirTileUrl(server.url, data.apiKey, t, 'jpg')) };
}

/** The pass-through and then the composite tiles, each once, on a fresh server. */
async function coldPasses(one: Started, data: TileData, lists: TileLists, s: StorageSettings): Promise<Measurement[]> {
  const composite = lists.composite.map((t) => nadirTileUrl(one.server.url, data.apiKey, t, 'jpg'));
  return [
    await coldPass('pass-through cold', one.urls, one.server, one.backend, s.coldConcurrency),
    await coldPass('composite cold', composite, one.server, one.backend, s.coldConcurrency),
  ];
}

/** The median round of each measurement, with every round's rate. */
function medians(rounds: Measurement[][]): Measurement[] {
  return (rounds[0] ?? []).map((_, i) => {
    const sorted = rounds.map((round) => round[i] as Measurement).sort((a, b) => a.perSecond - b.perSecond);
    const median = sorted[Math.floor(sorted.length / 2)] as Measurement;
    return sorted.length > 1 ? { ...median, rounds: sorted.map((m) => m.perSecond) } : median;
  });
}

/**
 * Cold passes on every storage kind in turn, `coldRounds` times, each on a fresh server, so a slow
 * moment of the machine falls on each alike; the median round counts. The last round's servers
 * stay up: the raster downloads follow their cold tiles, and the warm pass runs on them.
 */
async function measureCold(
  backends: Backend[],
  data: TileData,
  lists: TileLists,
  s: StorageSettings,
  started: Started[],
): Promise<Measurement[]> {
  const rounds = new Map<Backend, Measurement[][]>(backends.map((backend) => [backend, []]));
  // The raster downloads' keys, written before any server starts (as each server would read them).
  const keys = new Map<Backend, string>();
  for (const backend of backends) {
    const env = { ...backend.env, NADIR_DATA_DIR: data.dataDir };
    keys.set(backend, await issueBenchKey(env, `storage-${backend.kind}`, 100));
  }
  const roundCount = s.coldRounds ?? 1;
  for (let round = 0; round < roundCount; round++) {
    for (const backend of backends) {
      const one = await startFresh(backend, data, lists, s);
      try {
        rounds.get(backend)?.push(await coldPasses(one, data, lists, s));
      } finally {
        if (round < roundCount - 1) await one.server.stop();
        else started.push(one);
      }
    }
  }
  const measurements: Measurement[] = [];
  for (const one of started) {
    measurements.push(...medians(rounds.get(one.backend) ?? []));
    measurements.push(await rasterDownloads(one.server, keys.get(one.backend) as string, one.backend, s));
  }
  return measurements;
}

/**
 * Warm pass-through on every started server, taken in turn `rounds` times so a slow moment of the
 * machine falls on each alike; the median round counts.
 */
async function measureWarm(started: Started[], s: StorageSettings): Promise<Measurement[]> {
  const rounds = new Map<Started, Measurement[]>(started.map((one) => [one, []]));
  for (let round = 0; round < s.warmRounds; round++) {
    for (const one of started) rounds.get(one)?.push(await warmPassThrough(one.urls, one.server, one.backend, s));
  }
  return started.map((one) => {
    const sorted = [...(rounds.get(one) ?? [])].sort((a, b) => a.perSecond - b.perSecond);
    const median = sorted[Math.floor(sorted.length / 2)] as Measurement;
    return { ...median, rounds: sorted.map((m) => m.perSecond) };
  });
}

/** Measures; bench/storage/report.ts words the figures. */
export async function measureStorage(
  options: SectionOptions,
  overrides: Partial<StorageSettings> = {},
): Promise<StorageRaw> {
  const settings = storageSettings(options.quick, overrides);
  const log = (line: string) => options.log(`storage: ${line}`);
  const started = Date.now();
  const loadStart = loadavg();
  const data = await tileData({ fresh: options.fresh, log });
  const s3 = await startS3(BUCKET);
  // By hand only (the figures of record are on loopback): a bucket farther away, through a proxy.
  const delayMs = Number(process.env.NADIR_BENCH_BUCKET_DELAY_MS ?? 0);
  const mbps = Number(process.env.NADIR_BENCH_BUCKET_MBPS ?? 0);
  const proxy =
    delayMs || mbps ? await startDistantBucket(s3.endpoint, { delayMs, bytesPerMs: (mbps * 1e6) / 1000 }) : undefined;
  const distance = proxy ? `, behind a proxy that sends each answer ${delayMs} ms late and at most ${mbps} MB/s` : '';
  const precut = await scratchDir('storage-precut');
  try {
    const s3Env = { ...s3.env, NADIR_STORAGE: `s3://${BUCKET}/${PREFIX}` };
    const files = await uploadSurveys(data.dataDir, s3Env);
    log(`${files} survey files uploaded to s3://${BUCKET}/${PREFIX}`);
    const lister = await startNadirServe({ env: { NADIR_DATA_DIR: data.dataDir }, label: 'storage-lists' });
    const lists = await findTileLists(lister.url, data, precut, settings.maxTiles).finally(() => lister.stop());
    const backends: Backend[] = [
      { kind: 'local', env: {} },
      {
        kind: 's3',
        env: { ...s3Env, NADIR_S3_ENDPOINT: proxy?.url ?? s3.endpoint, NADIR_STORAGE_CACHE_MB: `${BLOCK_CACHE_MB}` },
        answered: () => s3.answered(),
        storePid: () => s3.pid(),
      },
    ];
    const measurements: Measurement[] = [];
    const servers: Started[] = [];
    try {
      measurements.push(...(await measureCold(backends, data, lists, settings, servers)));
      measurements.push(...(await measureWarm(servers, settings)));
    } finally {
      for (const one of servers) await one.server.stop();
    }
    for (const m of measurements) {
      const fetched = m.fetched ? `, ${(m.fetched.requests / m.count).toFixed(2)} storage requests each` : '';
      log(`${m.storage} ${m.what}: ${m.perSecond.toFixed(1)}/s, ${m.msEach.toFixed(1)} ms each${fetched}`);
    }
    return {
      settings,
      machine: { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown', loadStart, loadEnd: loadavg() },
      versions: { node: process.version },
      store: `s3rver (npm @20minutes/s3rver) on loopback${distance}`,
      countedBy: 'store',
      surveys: files,
      blocks: { blockBytes: BLOCK_BYTES, cacheMb: BLOCK_CACHE_MB },
      measurements,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await removeScratch(precut);
    await proxy?.stop();
    await s3.stop();
  }
}
