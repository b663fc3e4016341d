/**
 * Tile benchmark (issues #5 and #6): nadir's map tiles against nginx serving the same tiles pre-cut
 * (the ceiling), a rasterio tiler and MapServer drawing them from the same COGs, and a bare Node
 * server (the ceiling of one event loop), all started here on loopback, driven by wrk at 1, 8, 64
 * and 256 keep-alive connections, in alternating rounds.
 * bench/tiles/main.ts runs it alone.
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startMapServer } from '../contenders/mapserver.js';
import { startRasterioTiler } from '../contenders/rasterio-tiler.js';
import { startTileNginx } from '../load/nginx.js';
import { type Service, scratchDir, withGroups } from '../load/processes.js';
import { formatProfile, type ProfileSummary, summariseProfiles } from '../load/profile.js';
import type { SectionOptions } from '../report/section.js';
import { tileData, WORK } from './data.js';
import { decodeTiles, measureEncoders } from './encoders.js';
import { measureOnce, runMatrix, type Target } from './measure.js';
import type { TilesRaw, TilesSettings } from './raw.js';
import { startBareNode, startNadir } from './servers.js';
import { prewarm, tileTargets } from './targets.js';
import { findTileLists, nadirTileUrl } from './tile-lists.js';

const run = promisify(execFile);

export function tilesSettings(quick: boolean, overrides: Partial<TilesSettings> = {}): TilesSettings {
  const base: TilesSettings = quick
    ? {
        connections: [8, 64],
        rounds: 1,
        seconds: 3,
        warmupSeconds: 1,
        threads: 2,
        maxTiles: 400,
        cacheMb: 256,
        profile: false,
        bareBodyBytes: 20_000,
      }
    : {
        connections: [1, 8, 64, 256],
        rounds: 3,
        seconds: 7,
        warmupSeconds: 1,
        threads: 2,
        maxTiles: 400,
        cacheMb: 256,
        profile: false,
        bareBodyBytes: 20_000,
      };
  return { ...base, ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) };
}

async function versions(): Promise<Record<string, string>> {
  const first = async (command: string, args: string[]) => {
    // wrk --version exits 1 after printing its version.
    const { stdout, stderr } = await run(command, args).catch((e: { stdout?: string; stderr?: string }) => ({
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    }));
    return `${stdout}${stderr}`.trim().split('\n')[0] ?? '';
  };
  const rasterio = await first('/usr/bin/python3', ['-c', 'import rasterio; print(rasterio.__version__)']);
  return {
    node: process.version,
    nginx: (await first('nginx', ['-v'])).replace('nginx version: ', ''),
    wrk: (await first('wrk', ['--version'])).replace(/ Copyright.*/, ''),
    gdal: await first('gdalinfo', ['--version']),
    mapserver: (await first('mapserv', ['-v'])).replace(/ OUTPUT=.*/, ''),
    gunicorn: await first('/usr/bin/gunicorn', ['--version']),
    rasterio: `rasterio ${rasterio}`,
    // What nadir's tile encoder (native/tile-codec) links against.
    codec: await run('dpkg-query', [
      '-W',
      '-f',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own field syntax.
      '${Package} ${Version}, ',
      'libjpeg62-turbo',
      'libdeflate0',
    ]).then(
      ({ stdout }) => stdout.replace(/, $/, ''),
      () => '?',
    ),
  };
}

async function profileNadir(
  data: Awaited<ReturnType<typeof tileData>>,
  settings: TilesSettings,
  runs: { id: string; urls: (base: string) => string[] }[],
  log: (line: string) => void,
): Promise<Record<string, ProfileSummary>> {
  const profiles: Record<string, ProfileSummary> = {};
  for (const { id, urls } of runs) {
    const dir = await scratchDir('cpuprof');
    const spawned = Date.now();
    const nadir = await startNadir({
      dataDir: data.dataDir,
      tileCacheMb: settings.cacheMb,
      workers: settings.nadirWorkers,
      cpuProfileDir: dir,
    });
    let window: { fromMs: number; toMs: number } | undefined;
    try {
      const target: Target = { id, name: `nadir ${id} (profiled)`, urls: urls(nadir.url), expect: 200 };
      await prewarm(target);
      const point = await measureOnce(target, 64, 0, { ...settings, seconds: Math.max(settings.seconds, 5) });
      log(
        `profile ${id}: ${point.requestsPerSecond.toFixed(0)} tiles/s under the profiler${point.error ? ` FAILED ${point.error}` : ''}`,
      );
      // Only the measured run: start-up, the warm-up pass and the shutdown are not what the figures measure.
      if (point.startedAt && point.endedAt)
        window = { fromMs: point.startedAt - spawned, toMs: point.endedAt - spawned };
    } finally {
      await nadir.stop();
    }
    profiles[id] = await summariseProfiles(dir, 15, window);
    log(formatProfile(`profile ${id}`, profiles[id] as ProfileSummary));
    await rm(dir, { recursive: true, force: true });
  }
  return profiles;
}

/** Measures; bench/tiles/report.ts words the figures. */
export async function measureTiles(options: SectionOptions, overrides: Partial<TilesSettings> = {}): Promise<TilesRaw> {
  const settings = tilesSettings(options.quick, overrides);
  const log = (line: string) => options.log(`tiles: ${line}`);
  const started = Date.now();
  const loadStart = loadavg();
  const data = await tileData({ fresh: options.fresh, log });
  const precutRoot = join(WORK, 'precut');
  const services: Service[] = [];
  const stopAll = async () => {
    for (const service of services.reverse()) await service.stop();
    services.length = 0;
  };
  // Each server's process groups (those started while it started), for its CPU per answer.
  const groups: Record<string, number[]> = {};
  const startServer = async <T extends Service>(name: string, start: () => Promise<T>): Promise<T> => {
    const { started: service, groups: its } = await withGroups(start);
    services.push(service);
    groups[name] = its;
    return service;
  };
  try {
    const nadir = await startServer('nadir', () =>
      startNadir({ dataDir: data.dataDir, tileCacheMb: settings.cacheMb, workers: settings.nadirWorkers }),
    );
    // The same data behind `nadir serve --workers auto` (one process per core, node:cluster).
    const nadirCluster = await startServer('nadirCluster', () =>
      startNadir({ dataDir: data.dataDir, tileCacheMb: settings.cacheMb, workers: 'auto' }),
    );
    log(
      `nadir at ${nadir.url} (${nadir.processes} process(es)), ${nadirCluster.url} (${nadirCluster.processes}); scanning tiles`,
    );
    const lists = await findTileLists(nadir.url, data, precutRoot, settings.maxTiles);
    log(
      `${lists.passThrough.length} pass-through tiles, ${lists.composite.length} composite tiles (scan: ${JSON.stringify(lists.scan)})`,
    );

    const nginx = await startServer('nginx', () => startTileNginx({ root: precutRoot }));
    const bare = await startServer('bare', () => startBareNode(settings.bareBodyBytes));
    // The single-COG routes read the older survey (the pass-through tiles); the mosaics both, newest first.
    const gdal = {
      cogPath: data.older.cog,
      mosaic: [data.newer.cog, data.older.cog],
      quality: 85,
      gdalCacheMb: settings.cacheMb,
    };
    const rasterio = await startServer('rasterio', () => startRasterioTiler({ ...gdal, workers: 2 }));
    const mapserver = await startServer('mapserver', () => startMapServer({ ...gdal, processes: 2 }));

    const servers = {
      nadir: { url: nadir.url, apiKey: data.apiKey },
      nadirCluster: { url: nadirCluster.url, processes: nadirCluster.processes },
      nginx,
      bare,
      rasterio,
      mapserver,
    };
    const targets = tileTargets(servers, lists, precutRoot, settings.bareBodyBytes / 1000).map((target) => ({
      ...target,
      groups: groups[serverOf(target.id)],
    }));
    const pixelDifference: Record<string, number | undefined> = {};
    for (const target of targets) {
      pixelDifference[target.id] = await prewarm(target);
      const difference = pixelDifference[target.id];
      log(
        `warm: ${target.name}${difference === undefined ? '' : `; mean |pixel difference| from the reference ${difference.toFixed(2)}`}`,
      );
    }

    // Pixels for the encoder comparison, taken while nadir runs; measured once the servers are gone.
    const samples = lists.composite.filter((_, i) => i % 4 === 0);
    const pngs = await Promise.all(
      samples.map(async (t) =>
        Buffer.from(await (await fetch(nadirTileUrl(nadir.url, data.apiKey, t, 'png'))).arrayBuffer()),
      ),
    );

    const points = await runMatrix({ ...settings, targets, log });
    await stopAll();

    log(`encoders: ${samples.length} composite tiles, one at a time, in this process`);
    const encoders = await measureEncoders(await decodeTiles(pngs), options.quick ? 1 : 3);

    let profiles: Record<string, ProfileSummary> = {};
    if (settings.profile) {
      profiles = await profileNadir(
        data,
        settings,
        [
          {
            id: 'pass-through',
            urls: (base) => lists.passThrough.map((t) => nadirTileUrl(base, data.apiKey, t, 'jpg')),
          },
          {
            id: 'composite-jpg',
            urls: (base) => lists.composite.map((t) => nadirTileUrl(base, data.apiKey, t, 'jpg')),
          },
          {
            id: 'composite-png',
            urls: (base) => lists.composite.map((t) => nadirTileUrl(base, data.apiKey, t, 'png')),
          },
        ],
        log,
      );
    }

    const { etags: _etags, ...listFacts } = lists;
    const raw: TilesRaw = {
      settings,
      machine: { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown', loadStart, loadEnd: loadavg() },
      versions: await versions(),
      data: { surveys: data.surveyCount, older: data.older, newer: data.newer },
      lists: listFacts,
      nadirProcesses: nadir.processes,
      nadirClusterProcesses: nadirCluster.processes,
      pixelDifference,
      encoders,
      targets: targets.map((t) => ({ id: t.id, name: t.name, urls: t.urls.length, expect: t.expect })),
      points,
      profiles,
      seconds: (Date.now() - started) / 1000,
    };
    return raw;
  } finally {
    await stopAll();
  }
}

/** Which started server answers a target (targets.ts's ids). */
function serverOf(targetId: string): string {
  if (targetId.startsWith('nadir')) return targetId.endsWith('-cluster') ? 'nadirCluster' : 'nadir';
  if (targetId === 'bare-node') return 'bare';
  return targetId.split('-')[0] as string;
}
