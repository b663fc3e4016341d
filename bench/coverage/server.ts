/**
 * The real `nadir serve` (compiled, through bin/nadir) over one cached benchmark catalogue: the
 * catalogue file is the server's database (NADIR_DATABASE), so a 1M-survey file is never copied;
 * the account and key the requests use are added to it first.
 */
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { issueBenchKey, startNadirServe } from '../load/nadir-serve.js';
import { removeScratch, type Service, scratchDir } from '../load/processes.js';

export interface CoverageServer extends Service {
  url: string;
  apiKey: string;
  /** Processes answering (one per core for `auto`): each has its own caches to warm. */
  processes: number;
  /** CPU seconds (user + system) used so far by the server's processes: robust to a busy machine. */
  cpuSeconds(): Promise<number>;
}

export interface CoverageServerOptions {
  database: string;
  /**
   * NADIR_WORKERS; undefined leaves serve's default (one process). A `:no-cache` suffix also
   * turns the coverage page cache off (NADIR_COVERAGE_CACHE_MB=0): every request searches.
   */
  workers?: string;
  /** Write a V8 CPU profile per process here when the server stops. */
  cpuProfileDir?: string;
  /** More of the server's environment (NADIR_DATABASE_CONNECTIONS, ...). */
  env?: NodeJS.ProcessEnv;
}

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux this runs on

/** utime + stime of every process in the group led by `pid` (a primary and its cluster workers). */
async function groupCpuSeconds(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  let ticks = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Fields after the command name (which may hold spaces) start at state: pgrp is the 3rd, utime the 12th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / TICKS_PER_SECOND;
}

export async function startCoverageServer(options: CoverageServerOptions): Promise<CoverageServer> {
  const dataDir = await scratchDir('coverage-serve');
  try {
    const env = { ...options.env, NADIR_DATA_DIR: dataDir, NADIR_DATABASE: options.database };
    const apiKey = await issueBenchKey(env, 'coverage');
    const [workers, variant] = options.workers?.split(':') ?? [];
    const serveEnv = variant === 'no-cache' ? { ...env, NADIR_COVERAGE_CACHE_MB: '0' } : env;
    const server = await startNadirServe({ ...options, workers, env: serveEnv, label: 'coverage-serve' });
    const stop = async () => {
      await server.stop();
      await removeScratch(dataDir);
    };
    const processes = workers === 'auto' ? availableParallelism() : Number(workers ?? 1);
    return { url: server.url, apiKey, stop, processes, cpuSeconds: () => groupCpuSeconds(server.child.pid) };
  } catch (error) {
    await removeScratch(dataDir);
    throw error;
  }
}
