/**
 * Cold tiles (issue 19): composite tiles nothing has drawn before, as an origin behind a CDN is
 * mostly asked for. Thousands of distinct composite tiles (cold-data.ts, cold-lists.ts), each asked
 * for once per run (wrk's `once` walk), from nadir with its tile cache at the default and at 0, and
 * from MapServer and the rasterio tiler drawing the same tiles with GDAL_CACHEMAX=16, so that every
 * server decodes what it draws. nadir is started afresh for every run (its caches empty; the
 * files stay in the page cache, as they do for GDAL); the GDAL servers keep running, their block
 * caches far too small for the list. Before each run, a warm-up on tiles set aside from the list
 * (never measured) warms JIT, processes and connections. The server's CPU time over each run comes
 * from /proc, per thread name.
 */
import { cpus, loadavg } from 'node:os';
import { startMapServer } from '../contenders/mapserver.js';
import { startRasterioTiler } from '../contenders/rasterio-tiler.js';
import { cpuBetween, sampleCpu } from '../load/cpu.js';
import { type Service, withGroups } from '../load/processes.js';
import { runWrk } from '../load/wrk.js';
import type { SectionOptions } from '../report/section.js';
import { coldData } from './cold-data.js';
import { findColdList } from './cold-lists.js';
import { idleTimings, profileCold } from './cold-profile.js';
import type { ColdFormat, ColdPoint, ColdRaw, ColdSettings } from './cold-raw.js';
import { measureOnce, type Target } from './measure.js';
import { startNadir } from './servers.js';
import { meanDifference } from './targets.js';
import { nadirTileUrl } from './tile-lists.js';

export function coldSettings(quick: boolean, overrides: Partial<ColdSettings> = {}): ColdSettings {
  const base: ColdSettings = {
    connections: [8, 64],
    rounds: quick ? 1 : 3,
    seconds: quick ? 3 : 5,
    warmupSeconds: 1,
    warmupTiles: 400,
    threads: 2,
    formats: ['jpg', 'png'],
    gdalCacheMb: 16,
    defaultCacheMb: 256,
    profile: true,
  };
  return { ...base, ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) };
}

/** A server of the matrix: started once (GDAL) or before every run (nadir), with its process groups. */
interface ColdServer {
  id: string;
  name: string;
  /** Started afresh for each run. */
  fresh: boolean;
  start(): Promise<{ service: Service; url: (t: TileCoord, format: ColdFormat) => string }>;
}

type TileCoord = { z: number; x: number; y: number };

interface Running {
  service: Service;
  url: (t: TileCoord, format: ColdFormat) => string;
  groups: number[];
}

async function started(server: ColdServer): Promise<Running> {
  const { started, groups } = await withGroups(() => server.start());
  return { service: started.service, url: started.url, groups };
}

export async function measureCold(options: SectionOptions, overrides: Partial<ColdSettings> = {}): Promise<ColdRaw> {
  const settings = coldSettings(options.quick, overrides);
  const log = (line: string) => options.log(`cold: ${line}`);
  const begun = Date.now();
  const loadStart = loadavg();
  const data = await coldData({ fresh: options.fresh, log });

  // The list, from a server of its own (its caches are not the measured servers').
  const scanner = await startNadir({ dataDir: data.dataDir, tileCacheMb: 0 });
  const list = await findColdList(scanner.url, data).finally(() => scanner.stop());
  log(`${list.composite.length} composite tiles (scan: ${JSON.stringify(list.scan)})`);
  const warmup = list.composite.slice(0, settings.warmupTiles);
  const measured = list.composite.slice(settings.warmupTiles);
  const byZoom: Record<string, number> = {};
  for (const t of measured) byZoom[t.z] = (byZoom[t.z] ?? 0) + 1;

  const nadirServer = (id: string, name: string, cacheMb: number, root?: string): ColdServer => ({
    id,
    name,
    fresh: true,
    start: async () => {
      const nadir = await startNadir({ dataDir: data.dataDir, tileCacheMb: cacheMb, root });
      return { service: nadir, url: (t, format) => nadirTileUrl(nadir.url, data.apiKey, t, format) };
    },
  });
  const gdal = {
    cogPath: data.older.cog,
    mosaic: [data.newer.cog, data.older.cog],
    quality: 85,
    gdalCacheMb: settings.gdalCacheMb,
  };
  const servers: ColdServer[] = [
    nadirServer('nadir', `nadir, tile cache ${settings.defaultCacheMb} MB`, settings.defaultCacheMb),
    nadirServer('nadir-0', 'nadir, tile cache 0', 0),
    ...(settings.baseRoot
      ? [nadirServer('nadir-before', 'nadir before issue 19, tile cache 0', 0, settings.baseRoot)]
      : []),
    {
      id: 'mapserver',
      name: `MapServer, GDAL_CACHEMAX ${settings.gdalCacheMb}`,
      fresh: false,
      start: async () => {
        const mapserver = await startMapServer({ ...gdal, processes: 2 });
        return { service: mapserver, url: (t, format) => mapserver.mosaicUrl(t.z, t.x, t.y, format) };
      },
    },
    {
      id: 'rasterio',
      name: `rasterio tiler, GDAL_CACHEMAX ${settings.gdalCacheMb}`,
      fresh: false,
      start: async () => {
        const rasterio = await startRasterioTiler({ ...gdal, workers: 2 });
        return { service: rasterio, url: (t, format) => rasterio.mosaicUrl(t.z, t.x, t.y, format) };
      },
    },
  ];

  if (settings.only) servers.splice(0, servers.length, ...servers.filter((s) => settings.only?.includes(s.id)));
  const kept = new Map<string, Running>();
  const stopAll = async () => {
    for (const running of kept.values()) await running.service.stop();
    kept.clear();
  };
  const points: ColdPoint[] = [];
  const pixelDifference: Record<string, number> = {};
  try {
    // Every GDAL server is started once, and checked against nadir's tiles.
    const reference = await started(servers[1] as ColdServer);
    try {
      for (const server of servers) {
        const running = await started(server);
        try {
          const differences: number[] = [];
          for (const t of [measured[0], measured[Math.floor(measured.length / 2)], measured.at(-1)] as TileCoord[]) {
            const [a, b] = await Promise.all(
              [running.url(t, 'jpg'), reference.url(t, 'jpg')].map(async (u) =>
                Buffer.from(await (await fetch(u)).arrayBuffer()),
              ),
            );
            differences.push(await meanDifference(a as Buffer, b as Buffer));
          }
          pixelDifference[server.id] = Math.max(...differences);
          log(`${server.name}: mean |pixel difference| from nadir ${pixelDifference[server.id]?.toFixed(2)}`);
        } finally {
          if (server.fresh) await running.service.stop();
          else kept.set(server.id, running);
        }
      }
    } finally {
      await reference.service.stop();
    }

    const total = settings.rounds * settings.connections.length * servers.length * settings.formats.length;
    for (let round = 0; round < settings.rounds; round++) {
      for (const connections of settings.connections) {
        const shift = round % servers.length;
        const order = [...servers.slice(shift), ...servers.slice(0, shift)];
        for (const server of order) {
          for (const format of settings.formats) {
            const running = kept.get(server.id) ?? (await started(server));
            try {
              const point = await coldRun(server, running, format, connections, round, warmup, measured, settings);
              points.push(point);
              const cpuEach = point.requests > 0 ? point.cpu.totalMs / point.requests : 0;
              log(
                `[${points.length}/${total}] round ${round + 1} c${connections} ${server.name} ${format}: ${point.requestsPerSecond.toFixed(0)}/s p50 ${point.p50Ms.toFixed(1)} p99 ${point.p99Ms.toFixed(1)} ms, ${cpuEach.toFixed(2)} CPU ms/tile, load ${point.load.toFixed(1)}${point.error ? ` FAILED: ${point.error}` : ''}`,
              );
            } finally {
              if (!kept.has(server.id)) await running.service.stop();
            }
          }
        }
      }
    }
    await stopAll();

    const idle = await idleTimings(data, measured.slice(0, 150), settings, log);
    const profiles: ColdRaw['profiles'] = {};
    if (settings.profile) {
      profiles['nadir-0'] = await profileCold(data, warmup, measured, settings, log);
      if (settings.baseRoot)
        profiles['nadir-before'] = await profileCold(data, warmup, measured, settings, log, settings.baseRoot);
    }
    return {
      settings,
      machine: { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown', loadStart, loadEnd: loadavg() },
      data: { older: data.older, newer: data.newer },
      scan: list.scan,
      measuredTiles: measured.length,
      byZoom,
      targets: servers.map((s) => ({ id: s.id, name: s.name })),
      pixelDifference,
      points,
      idle,
      profiles,
      seconds: (Date.now() - begun) / 1000,
    };
  } finally {
    await stopAll();
  }
}

async function coldRun(
  server: ColdServer,
  running: Running,
  format: ColdFormat,
  connections: number,
  round: number,
  warmup: TileCoord[],
  measured: TileCoord[],
  settings: ColdSettings,
): Promise<ColdPoint> {
  const urls = (tiles: TileCoord[]) => tiles.map((t) => running.url(t, format));
  if (settings.warmupSeconds > 0) {
    await runWrk({ urls: urls(warmup), connections, threads: settings.threads, seconds: settings.warmupSeconds });
  }
  const target: Target = {
    id: server.id,
    name: server.name,
    urls: urls(measured),
    expect: 200,
    drainUrl: running.url(warmup[0] as TileCoord, format),
  };
  const load = loadavg()[0] as number;
  const before = await sampleCpu(running.groups);
  const point = await measureOnce(target, connections, round, { ...settings, warmupSeconds: 0, once: true });
  const cpu = cpuBetween(before, await sampleCpu(running.groups));
  return { ...point, format, cpu, load };
}
