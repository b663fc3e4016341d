/**
 * Mixed traffic for `minutes` at `connections` (issue 18, item 5): tiles 80% (pass-through and
 * composite, jpg and png), coverage 15%, image downloads 5% (500-2000 px, one token), in a
 * shuffled round-robin list that wrk walks. The server's RSS and open descriptors are sampled every
 * 5 s. Only 200, 304 and the documented refusals under load (429, 503) are acceptable answers.
 */
import { issueBenchKey, startNadirServe } from '../load/nadir-serve.js';
import { removeScratch, scratchDir } from '../load/processes.js';
import { runWrk } from '../load/wrk.js';
import { tileData } from '../tiles/data.js';
import { findTileLists, nadirTileUrl } from '../tiles/tile-lists.js';
import { coverageUrl, demoImageDownload, demoPoints } from './demo-urls.js';
import { startSampling } from './process-sample.js';
import type { TrafficRaw } from './raw.js';

const ACCEPTED = new Set(['200', '304', '429', '503']);

/** A deterministic shuffle (so runs are comparable): a linear congruential generator. */
function shuffled<T>(items: T[], seed = 42): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export async function measureTraffic(options: {
  minutes: number;
  connections: number;
  fresh: boolean;
  log: (line: string) => void;
}): Promise<TrafficRaw> {
  const data = await tileData({ fresh: options.fresh, log: options.log });
  const env = { NADIR_DATA_DIR: data.dataDir };
  const downloadKey = await issueBenchKey(env, 'soak', 1000);
  const precut = await scratchDir('soak-precut');
  const server = await startNadirServe({ env, label: 'soak' });
  try {
    const lists = await findTileLists(server.url, data, precut, 400);
    const download = await demoImageDownload(server.url, downloadKey);
    // 400 entries: 320 tiles, 60 coverage, 20 downloads.
    const tiles = [
      ...lists.passThrough.slice(0, 160).map((t) => nadirTileUrl(server.url, data.apiKey, t, 'jpg')),
      ...lists.composite.slice(0, 100).map((t) => nadirTileUrl(server.url, data.apiKey, t, 'jpg')),
      ...lists.composite.slice(100, 160).map((t) => nadirTileUrl(server.url, data.apiKey, t, 'png')),
    ];
    const coverage = demoPoints(60).map((p) => coverageUrl(server.url, downloadKey, p));
    const sizes = [500, 1000, 2000, 750, 1500];
    const downloads = Array.from({ length: 20 }, (_, i) =>
      download.url(sizes[i % sizes.length] as number, i % 4 === 3 ? 'png' : 'jpg'),
    );
    const urls = shuffled([...tiles, ...coverage, ...downloads]);
    const mix = { tiles: tiles.length, coverage: coverage.length, downloads: downloads.length };
    options.log(
      `soak traffic: ${urls.length} URLs (${JSON.stringify(mix)}), ${options.minutes} min at c${options.connections}`,
    );

    const sampling = startSampling(server.child.pid as number, 5000);
    const wrk = await runWrk({
      urls,
      connections: options.connections,
      seconds: Math.round(options.minutes * 60),
      threads: 2,
      timeoutSeconds: 30,
    });
    const samples = await sampling.stop();
    const unexpected = Object.entries(wrk.statuses)
      .filter(([status]) => !ACCEPTED.has(status))
      .reduce((sum, [, n]) => sum + n, 0);
    const { output: _output, ...figures } = wrk;
    return { minutes: options.minutes, connections: options.connections, mix, wrk: figures, unexpected, samples };
  } finally {
    await server.stop();
    await removeScratch(precut);
  }
}
