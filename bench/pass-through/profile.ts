/**
 * Where a pass-through answer's CPU goes: one nadir process under `--cpu-prof`, wrk on the
 * pass-through tiles, the profile's self time by function and by origin.
 *   node --import tsx bench/pass-through/profile.ts [seconds] [a folder to keep the .cpuprofile in]
 */
import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { scratchDir } from '../load/processes.js';
import { formatProfile, summariseProfiles } from '../load/profile.js';
import { runWrk } from '../load/wrk.js';
import { tileData, WORK } from '../tiles/data.js';
import { startNadir } from '../tiles/servers.js';
import { findTileLists, nadirTileUrl } from '../tiles/tile-lists.js';

const seconds = Number(process.argv[2] ?? 8);
const keep = process.argv[3];
const log = (line: string) => process.stderr.write(`${line}\n`);
const data = await tileData({ fresh: false, log });
const dir = await scratchDir('pass-through-cpuprof');
const spawned = Date.now();
const nadir = await startNadir({ dataDir: data.dataDir, tileCacheMb: 256, workers: '1', cpuProfileDir: dir });
let window: { fromMs: number; toMs: number } | undefined;
try {
  const lists = await findTileLists(nadir.url, data, join(WORK, 'pass-through-precut'), 200);
  const urls = lists.passThrough.map((t) => nadirTileUrl(nadir.url, data.apiKey, t, 'jpg'));
  await runWrk({ urls, connections: 64, threads: 2, seconds: 2 });
  const fromMs = Date.now() - spawned;
  const result = await runWrk({ urls, connections: 64, threads: 2, seconds });
  window = { fromMs, toMs: Date.now() - spawned };
  log(`${result.requestsPerSecond.toFixed(0)} tiles/s under the profiler`);
} finally {
  await nadir.stop();
}
log(formatProfile('pass-through', await summariseProfiles(dir, 45, window)));
// The raw profile too, for a closer look (a call tree, inclusive times): `[seconds] [keep dir]`.
if (keep) await cp(dir, keep, { recursive: true });
await rm(dir, { recursive: true, force: true });
