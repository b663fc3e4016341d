/**
 * Pass-through against node's own limit (issue 37): one nadir process sending stored tiles as they
 * are, against bare node:http sending the very same bytes from a Map (bare-tiles-server.mjs) and
 * nginx sending them pre-cut from disk, asked for the same tiles by wrk at 64 connections, rounds
 * interleaved (the order rotates), with the CPU each server's processes spent per answer (from
 * /proc) beside its throughput: on this VM throughput moves by 2x between runs, CPU per answer
 * much less. nadir runs with metrics off, and again with them on; 304 revalidations are measured
 * on the first.
 */
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { cpuBetween, sampleCpu } from '../load/cpu.js';
import { startTileNginx } from '../load/nginx.js';
import {
  freePort,
  removeScratch,
  type Service,
  scratchDir,
  startGroup,
  stopGroup,
  waitForHttp,
  withGroups,
} from '../load/processes.js';
import { runWrk } from '../load/wrk.js';
import type { SectionOptions } from '../report/section.js';
import { tileData, WORK } from '../tiles/data.js';
import { startNadir } from '../tiles/servers.js';
import { findTileLists, nadirTileUrl } from '../tiles/tile-lists.js';
import type { PassThroughPoint, PassThroughRaw, PassThroughSettings, PassThroughTarget } from './raw.js';

interface Running {
  id: PassThroughTarget;
  name: string;
  urls: string[];
  headersByUrl?: Record<string, Record<string, string>>;
  expect: 200 | 304;
  groups: number[];
}

export function passThroughSettings(quick: boolean): PassThroughSettings {
  return quick
    ? { rounds: 1, seconds: 3, connections: 64, threads: 2, maxTiles: 200 }
    : { rounds: 5, seconds: 6, connections: 64, threads: 2, maxTiles: 200 };
}

/**
 * The header block nadir sends with a pass-through tile, as name, value pairs, without its
 * Content-Length and the headers node adds itself (Date, Connection, Keep-Alive).
 */
export async function nadirHeaderBlock(url: string): Promise<string[]> {
  const answer = await fetch(url);
  await answer.arrayBuffer();
  if (answer.status !== 200) throw new Error(`nadir answered ${answer.status} for a pass-through tile`);
  const own = new Set(['content-length', 'date', 'connection', 'keep-alive']);
  return [...answer.headers].filter(([name]) => !own.has(name)).flat();
}

/** What bare-owed-server.mjs needs to owe what nadir owes: the key, the tiles' ETags, nadir's values. */
export function owedWork(block: string[], apiKey: string, etags: Record<string, string>) {
  const value = (name: string) => {
    const at = block.indexOf(name);
    if (at === -1 || at % 2 !== 0) throw new Error(`nadir's header block has no ${name}`);
    return block[at + 1] as string;
  };
  const cors = ['access-control-allow-origin', 'access-control-expose-headers', 'timing-allow-origin'];
  return {
    apiKey,
    etags,
    cors: cors.flatMap((name) => [name, value(name)]),
    surveyIds: value('x-survey-ids'),
    cacheControl: value('cache-control'),
    limit: Number(value('x-ratelimit-limit')),
    interval: 60,
  };
}

export async function startBare(script: string, root: string, config?: unknown): Promise<Service & { url: string }> {
  const dir = await scratchDir('bare-tiles');
  const port = await freePort();
  const args = [join(import.meta.dirname, script), `${port}`, root];
  if (config !== undefined) {
    await writeFile(join(dir, 'config.json'), JSON.stringify(config));
    args.push(join(dir, 'config.json'));
  }
  const started = startGroup(process.execPath, args, join(dir, 'log'));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopGroup(started.child);
    await removeScratch(dir);
  };
  await waitForHttp(`${url}/`, started).catch(async (error) => {
    await stop();
    throw error;
  });
  return { url, stop };
}

/** Runs `target` once at the settings' load; its point carries the CPU its processes spent. */
async function measureOnce(target: Running, round: number, settings: PassThroughSettings): Promise<PassThroughPoint> {
  const wrk = (seconds: number) =>
    runWrk({
      urls: target.urls,
      headersByUrl: target.headersByUrl,
      connections: settings.connections,
      threads: settings.threads,
      seconds,
    });
  // A second of the same load first: connections open, code hot, then the measured run.
  await wrk(1);
  const before = await sampleCpu(target.groups);
  const result = await wrk(settings.seconds);
  const cpu = cpuBetween(before, await sampleCpu(target.groups));
  const wrong = Object.entries(result.statuses).filter(([status]) => Number(status) !== target.expect);
  return {
    target: target.id,
    round,
    requestsPerSecond: result.requestsPerSecond,
    requests: result.requests,
    p99Ms: result.p99Ms,
    cpu,
    ...(wrong.length > 0 ? { error: `expected all ${target.expect}, got ${JSON.stringify(result.statuses)}` } : {}),
  };
}

export async function measurePassThrough(
  options: SectionOptions,
  settings = passThroughSettings(options.quick),
): Promise<PassThroughRaw> {
  const started = Date.now();
  const loadStart = loadavg();
  const log = (line: string) => options.log(`pass-through: ${line}`);
  const data = await tileData({ fresh: options.fresh, log });
  const precut = join(WORK, 'pass-through-precut');
  const services: Service[] = [];
  const start = async <T extends Service>(begin: () => Promise<T>) => {
    const { started: service, groups } = await withGroups(begin);
    services.push(service);
    return { service, groups };
  };
  try {
    const nadir = await start(() => startNadir({ dataDir: data.dataDir, tileCacheMb: 256, workers: '1' }));
    const metricsPort = await freePort();
    const nadirMetrics = await start(() =>
      startNadir({
        dataDir: data.dataDir,
        tileCacheMb: 256,
        workers: '1',
        env: { NADIR_METRICS_PORT: `${metricsPort}` },
      }),
    );
    const lists = await findTileLists(nadir.service.url, data, precut, settings.maxTiles);
    const pt = lists.passThrough;
    const urlsOf = (base: string) => pt.map((t) => nadirTileUrl(base, data.apiKey, t, 'jpg'));
    const nadirUrls = urlsOf(nadir.service.url);
    const block = await nadirHeaderBlock(nadirUrls[0] as string);
    const bare = await start(() => startBare('bare-tiles-server.mjs', precut));
    const bareHeaders = await start(() => startBare('bare-tiles-server.mjs', precut, block));
    const owed = owedWork(block, data.apiKey, lists.etags);
    const bareOwed = await start(() => startBare('bare-owed-server.mjs', precut, owed));
    const nginx = await start(() => startTileNginx({ root: precut }));
    const key = (t: { z: number; x: number; y: number }) => `${t.z}/${t.x}/${t.y}`;
    const targets: Running[] = [
      {
        id: 'bare',
        name: 'bare node:http, the same tiles from a Map',
        urls: urlsOf(bare.service.url),
        expect: 200,
        groups: bare.groups,
      },
      {
        id: 'bare-headers',
        name: "bare node:http, the same tiles from a Map with nadir's header block",
        urls: urlsOf(bareHeaders.service.url),
        expect: 200,
        groups: bareHeaders.groups,
      },
      {
        id: 'bare-owed',
        name: 'bare node:http doing what every answer owes (key digest, rate limit, usage, request id, ETag, timings)',
        urls: urlsOf(bareOwed.service.url),
        expect: 200,
        groups: bareOwed.groups,
      },
      { id: 'nadir', name: 'nadir pass-through', urls: nadirUrls, expect: 200, groups: nadir.groups },
      {
        id: 'nadir-304',
        name: 'nadir 304 revalidation',
        urls: nadirUrls,
        headersByUrl: Object.fromEntries(
          pt.map((t, i) => [nadirUrls[i] as string, { 'If-None-Match': lists.etags[key(t)] ?? '' }]),
        ),
        expect: 304,
        groups: nadir.groups,
      },
      {
        id: 'nadir-metrics',
        name: 'nadir pass-through, metrics on',
        urls: urlsOf(nadirMetrics.service.url),
        expect: 200,
        groups: nadirMetrics.groups,
      },
      {
        id: 'nginx',
        name: 'nginx, the same tiles pre-cut (2 workers)',
        urls: pt.map((t) => nginx.service.tileUrl(t.z, t.x, t.y)),
        expect: 200,
        groups: nginx.groups,
      },
    ];
    const points: PassThroughPoint[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      const shift = round % targets.length;
      for (const target of [...targets.slice(shift), ...targets.slice(0, shift)]) {
        const point = await measureOnce(target, round, settings);
        points.push(point);
        const cpuEach = point.cpu.totalMs / Math.max(1, point.requests);
        log(
          `round ${round + 1} ${target.name}: ${point.requestsPerSecond.toFixed(0)}/s, ${cpuEach.toFixed(4)} CPU ms an answer${point.error ? ` FAILED ${point.error}` : ''}`,
        );
      }
    }
    return {
      settings,
      machine: { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown', loadStart, loadEnd: loadavg() },
      node: process.version,
      tiles: pt.length,
      medianBytes: lists.medianBytes.passThrough,
      targets: targets.map(({ id, name }) => ({ id, name })),
      points,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    for (const service of services.reverse()) await service.stop();
  }
}
