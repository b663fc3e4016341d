/**
 * Redis tile limits, this checkout against another (built) one, in the same run: one server with
 * limits in memory, one with Redis (this build) and one with Redis (the other build), measured in
 * rotating turns, with each server's CPU per tile. For changes to src/limits/redis-rate-limiter.ts,
 * which the scale part measures only against memory.
 *   node --import tsx bench/scale/redis-before-after.ts <built checkout> [rounds, default 5]
 */
import { startRedis } from '../../test/support/servers.js';
import { cpuBetween, sampleCpu } from '../load/cpu.js';
import { startNadirServe } from '../load/nadir-serve.js';
import { removeScratch, scratchDir } from '../load/processes.js';
import { runWrk } from '../load/wrk.js';
import { tileData } from '../tiles/data.js';
import { findTileLists, nadirTileUrl } from '../tiles/tile-lists.js';

const [beforeRoot, roundsText] = process.argv.slice(2);
if (!beforeRoot) throw new Error('usage: redis-before-after.ts <built checkout> [rounds]');
const rounds = Number(roundsText ?? 5);
const log = (line: string) => process.stderr.write(`${line}\n`);
const data = await tileData({ fresh: false, log });
const env = { NADIR_DATA_DIR: data.dataDir, NADIR_TILE_CACHE_MB: '256' };
const redis = await startRedis();
const withRedis = { ...env, NADIR_REDIS_URL: redis.url };
const setups = [
  ['memory', await startNadirServe({ env, label: 'redis-ab-memory' })],
  ['redis, this build', await startNadirServe({ env: withRedis, label: 'redis-ab-this' })],
  ['redis, before', await startNadirServe({ env: withRedis, label: 'redis-ab-before', root: beforeRoot })],
] as const;
const precut = await scratchDir('redis-ab');
try {
  const tiles = (await findTileLists(setups[0][1].url, data, precut, 400)).passThrough;
  for (let round = 0; round < rounds; round++) {
    const shift = round % setups.length;
    for (const [name, server] of [...setups.slice(shift), ...setups.slice(0, shift)]) {
      const urls = tiles.map((t) => nadirTileUrl(server.url, data.apiKey, t, 'jpg'));
      await runWrk({ urls, connections: 64, seconds: 1, threads: 2 });
      const groups = [server.child.pid as number];
      const start = await sampleCpu(groups);
      const result = await runWrk({ urls, connections: 64, seconds: 6, threads: 2 });
      const cpu = cpuBetween(start, await sampleCpu(groups));
      const statuses = JSON.stringify(result.statuses);
      const cpuEach = (cpu.totalMs / result.requests).toFixed(4);
      process.stdout.write(
        `round ${round + 1} ${name}: ${result.requestsPerSecond.toFixed(0)} tiles/s, ${cpuEach} CPU ms a tile, ${statuses}\n`,
      );
    }
  }
} finally {
  for (const [, server] of setups) await server.stop();
  await redis.stop();
  await removeScratch(precut);
}
