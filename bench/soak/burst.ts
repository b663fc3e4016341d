/**
 * Memory after a burst of large downloads (issue 18, item 3): a fresh server, warmed with a few
 * tiles, coverage calls and a small download, idles 5 s (its idle RSS); then `downloads` concurrent
 * `size` px TrueOrtho jpgs; then its RSS every second for 30 s. The same for each allocator
 * setting: glibc's malloc as is, and jemalloc preloaded (Debian's libjemalloc2).
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { issueBenchKey, startNadirServe } from '../load/nadir-serve.js';
import { tileData } from '../tiles/data.js';
import { pool } from '../tiles/tile-lists.js';
import { coverageUrl, demoImageDownload, demoPoints } from './demo-urls.js';
import { MIB, sampleProcess, startSampling } from './process-sample.js';
import type { BurstRaw } from './raw.js';

const JEMALLOC = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
const SETTLE_MB = 100;

export interface AllocatorSetting {
  allocator: string;
  env: Record<string, string>;
}

export function allocatorSettings(): AllocatorSetting[] {
  const settings: AllocatorSetting[] = [{ allocator: 'glibc malloc (default)', env: {} }];
  if (existsSync(JEMALLOC)) settings.push({ allocator: 'jemalloc 5.3 (LD_PRELOAD)', env: { LD_PRELOAD: JEMALLOC } });
  return settings;
}

async function drain(url: string): Promise<number> {
  const response = await fetch(url);
  await response.arrayBuffer();
  return response.status;
}

export async function measureBurst(
  setting: AllocatorSetting,
  options: { downloads: number; size: number; fresh: boolean; log: (line: string) => void },
): Promise<BurstRaw> {
  const data = await tileData({ fresh: options.fresh, log: options.log });
  const env = { NADIR_DATA_DIR: data.dataDir };
  const key = await issueBenchKey(env, 'burst', 1000);
  const server = await startNadirServe({ env: { ...env, ...setting.env }, label: 'burst' });
  try {
    const pid = server.child.pid as number;
    const download = await demoImageDownload(server.url, key);
    for (const p of demoPoints(20)) await drain(coverageUrl(server.url, key, p));
    for (const size of [256, 500]) await drain(download.url(size, 'jpg'));
    await sleep(5000);
    const idle = await sampleProcess(pid, 0);

    const sampling = startSampling(pid, 250);
    const started = performance.now();
    const statuses: Record<string, number> = {};
    await pool(Array(options.downloads).fill(download.url(options.size, 'jpg')), options.downloads, async (url) => {
      const status = await drain(url);
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
    const burstSeconds = (performance.now() - started) / 1000;
    const during = await sampling.stop();

    const after: BurstRaw['after'] = [];
    for (let second = 0; second <= 30; second++) {
      after.push({ at: second, rssBytes: (await sampleProcess(pid, second)).rssBytes });
      if (second < 30) await sleep(1000);
    }
    const settled = after.find((s) => s.rssBytes <= idle.rssBytes + SETTLE_MB * MIB);
    const raw: BurstRaw = {
      allocator: setting.allocator,
      env: setting.env,
      downloads: options.downloads,
      size: options.size,
      statuses,
      burstSeconds,
      idleRssBytes: idle.rssBytes,
      peakRssBytes: Math.max(...during.map((s) => s.rssBytes), ...after.map((s) => s.rssBytes)),
      after,
      settledSeconds: settled?.at,
    };
    const mb = (bytes: number) => `${(bytes / MIB).toFixed(0)} MB`;
    options.log(
      `burst ${setting.allocator}: ${JSON.stringify(statuses)} in ${burstSeconds.toFixed(1)} s; idle ${mb(raw.idleRssBytes)}, ` +
        `peak ${mb(raw.peakRssBytes)}, after 30 s ${mb(after.at(-1)?.rssBytes ?? 0)}; ` +
        `within ${SETTLE_MB} MB of idle ${settled ? `after ${settled.at} s` : 'not within 30 s'}`,
    );
    return raw;
  } finally {
    await server.stop();
  }
}
