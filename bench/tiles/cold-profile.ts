/**
 * Where a cold composite's milliseconds go: Server-Timing of tiles asked for one at a time on an
 * idle server (what one tile costs with nothing else running), and nadir under a cold jpg load at
 * 64 connections with V8's CPU profiler (its event loop by function) and /proc (its threads: the
 * event loop, the libuv pool's decodes, encodes and reads, and V8's garbage collector helpers).
 */
import { rm } from 'node:fs/promises';
import { cpuBetween, sampleCpu } from '../load/cpu.js';
import { scratchDir, withGroups } from '../load/processes.js';
import { formatProfile, summariseProfiles } from '../load/profile.js';
import { runWrk } from '../load/wrk.js';
import type { ColdData } from './cold-data.js';
import type { ColdProfile, ColdSettings, IdleTimings } from './cold-raw.js';
import { measureOnce } from './measure.js';
import { startNadir } from './servers.js';
import { nadirTileUrl } from './tile-lists.js';

type TileCoord = { z: number; x: number; y: number };

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/** `name;dur=1.23` entries of a Server-Timing header. */
function timingsOf(header: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of header.split(',')) {
    const match = /^\s*([\w-]+);dur=([\d.]+)/.exec(entry);
    if (match) out[match[1] as string] = Number(match[2]);
  }
  return out;
}

/** The first 20 tiles warm the process (JIT) and are not counted; the rest are asked for one at a time. */
export async function idleTimings(
  data: ColdData,
  tiles: TileCoord[],
  settings: ColdSettings,
  log: (line: string) => void,
): Promise<IdleTimings[]> {
  const results: IdleTimings[] = [];
  const builds = [
    { target: 'nadir-0', root: undefined },
    ...(settings.baseRoot ? [{ target: 'nadir-before', root: settings.baseRoot }] : []),
  ];
  for (const { target, root } of builds) {
    for (const format of settings.formats) {
      const nadir = await startNadir({ dataDir: data.dataDir, tileCacheMb: 0, root });
      try {
        const render: number[] = [];
        const catalogue: number[] = [];
        const wall: number[] = [];
        for (const [i, t] of tiles.entries()) {
          const began = performance.now();
          const response = await fetch(nadirTileUrl(nadir.url, data.apiKey, t, format));
          await response.arrayBuffer();
          if (i < 20) continue;
          wall.push(performance.now() - began);
          const timings = timingsOf(response.headers.get('server-timing') ?? '');
          render.push(timings.render ?? Number.NaN);
          catalogue.push(timings.catalogue ?? Number.NaN);
        }
        const result = {
          target,
          format,
          tiles: wall.length,
          renderMs: median(render),
          catalogueMs: median(catalogue),
          wallMs: median(wall),
        };
        results.push(result);
        log(
          `idle ${target} ${format}: render ${result.renderMs.toFixed(2)} ms, catalogue ${result.catalogueMs.toFixed(2)} ms, wall ${result.wallMs.toFixed(2)} ms (medians of ${result.tiles})`,
        );
      } finally {
        await nadir.stop();
      }
    }
  }
  return results;
}

export async function profileCold(
  data: ColdData,
  warmup: TileCoord[],
  measured: TileCoord[],
  settings: ColdSettings,
  log: (line: string) => void,
  root?: string,
): Promise<ColdProfile> {
  const dir = await scratchDir('cold-cpuprof');
  try {
    const spawned = Date.now();
    const { started: nadir, groups } = await withGroups(() =>
      startNadir({ dataDir: data.dataDir, tileCacheMb: 0, cpuProfileDir: dir, root }),
    );
    let point: Awaited<ReturnType<typeof measureOnce>>;
    let cpu: ColdProfile['cpu'];
    try {
      const url = (t: TileCoord) => nadirTileUrl(nadir.url, data.apiKey, t, 'jpg');
      await runWrk({ urls: warmup.map(url), connections: 64, seconds: Math.max(settings.warmupSeconds, 2) });
      const target = {
        id: 'nadir-0',
        name: 'nadir, tile cache 0 (profiled)',
        urls: measured.map(url),
        expect: 200 as const,
      };
      const start = await sampleCpu(groups);
      point = await measureOnce({ ...target, drainUrl: url(warmup[0] as TileCoord) }, 64, 0, {
        ...settings,
        warmupSeconds: 0,
        once: true,
      });
      cpu = cpuBetween(start, await sampleCpu(groups));
    } finally {
      await nadir.stop();
    }
    const window =
      point.startedAt && point.endedAt
        ? { fromMs: point.startedAt - spawned, toMs: point.endedAt - spawned }
        : undefined;
    const summary = await summariseProfiles(dir, 20, window);
    log(
      `profile: ${point.requestsPerSecond.toFixed(0)} tiles/s under the profiler${point.error ? ` FAILED ${point.error}` : ''}`,
    );
    log(formatProfile(`profile cold jpg${root ? ` (${root})` : ''}`, summary));
    log(
      `profile threads (CPU ms per tile): ${Object.entries(cpu.byThread)
        .map(([name, ms]) => `${name} ${(ms / Math.max(1, point.requests)).toFixed(3)}`)
        .join(', ')}`,
    );
    return { tilesPerSecond: point.requestsPerSecond, requests: point.requests, cpu, summary };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
