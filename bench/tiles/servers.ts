/**
 * The two Node servers of the tile benchmark: the real `nadir serve` (compiled, through bin/nadir,
 * so with production's UV_THREADPOOL_SIZE) and a bare node:http server answering one fixed JPEG,
 * the ceiling of one Node event loop on this machine.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startNadirServe } from '../load/nadir-serve.js';
import {
  freePort,
  removeScratch,
  type Service,
  scratchDir,
  startGroup,
  stopGroup,
  waitForHttp,
} from '../load/processes.js';

const run = promisify(execFile);

export interface NadirServer extends Service {
  url: string;
  /** Node processes in the server's group (1, or a primary plus its cluster workers). */
  processes: number;
}

export interface NadirServerOptions {
  dataDir: string;
  /** NADIR_TILE_CACHE_MB: decoded tile pixels kept, per process. */
  tileCacheMb: number;
  /** NADIR_WORKERS; undefined leaves serve's default. */
  workers?: string;
  /** Write V8 CPU profiles (one per process) here when the server stops. */
  cpuProfileDir?: string;
  /** Another checkout whose bin/nadir to run (load/nadir-serve.ts). */
  root?: string;
  /** More settings for the server (NADIR_METRICS_PORT, ...). */
  env?: NodeJS.ProcessEnv;
}

async function groupSize(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  const { stdout } = await run('pgrep', ['-g', `${pid}`]).catch(() => ({ stdout: '' }));
  return stdout.trim().split('\n').filter(Boolean).length;
}

export async function startNadir(options: NadirServerOptions): Promise<NadirServer> {
  const { url, child, stop } = await startNadirServe({
    env: { ...options.env, NADIR_DATA_DIR: options.dataDir, NADIR_TILE_CACHE_MB: `${options.tileCacheMb}` },
    label: 'nadir',
    workers: options.workers,
    cpuProfileDir: options.cpuProfileDir,
    root: options.root,
  });
  // Cluster workers may still be starting: wait until the count stops changing.
  let processes = await groupSize(child.pid);
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await groupSize(child.pid);
    if (now === processes && i >= 3) break;
    processes = now;
  }
  return { url, stop, processes };
}

export interface BareServer extends Service {
  url: string;
}

/** bare-server.mjs: one process, one event loop, no framework, the same body for every URL. */
export async function startBareNode(bodyBytes: number): Promise<BareServer> {
  const dir = await scratchDir('bare');
  const port = await freePort();
  const script = join(import.meta.dirname, 'bare-server.mjs');
  const started = startGroup(process.execPath, [script, `${port}`, `${bodyBytes}`], join(dir, 'log'));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopGroup(started.child);
    await removeScratch(dir);
  };
  try {
    await waitForHttp(`${url}/`, started);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}
