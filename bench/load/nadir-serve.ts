/**
 * The real `nadir serve` as every benchmark part runs it: compiled, through bin/nadir (so with
 * production's UV_THREADPOOL_SIZE), on a free loopback port, logging warnings only (production
 * does not log a line per request), in its own process group that `stop` takes down.
 */

import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { systemClock } from '../../src/cli/system-clock.js';
import { createServices } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { freePort, removeScratch, type Service, scratchDir, startGroup, stopGroup, waitForHttp } from './processes.js';

const ROOT = join(import.meta.dirname, '../..');

export interface NadirServeOptions {
  /** NADIR_DATA_DIR and any other setting; port, host and log level are set here. */
  env: NodeJS.ProcessEnv;
  /** Names the scratch folder that holds the log. */
  label: string;
  /** NADIR_WORKERS; undefined leaves serve's default (one process). */
  workers?: string;
  /** Write a V8 CPU profile per process here when the server stops. */
  cpuProfileDir?: string;
  /** Another checkout's bin/nadir (built), to measure an older build against this one; this one by default. */
  root?: string;
}

export interface NadirServe extends Service {
  url: string;
  /** The group's leader (the primary under --workers). */
  child: ChildProcess;
}

export async function startNadirServe(options: NadirServeOptions): Promise<NadirServe> {
  const scratch = await scratchDir(options.label);
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...options.env,
    NADIR_PORT: `${port}`,
    NADIR_HOST: '127.0.0.1',
    NADIR_LOG_LEVEL: 'warn',
  };
  if (options.workers !== undefined) env.NADIR_WORKERS = options.workers;
  const profile = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const started = startGroup(
    process.execPath,
    [...profile, join(options.root ?? ROOT, 'bin/nadir'), 'serve'],
    join(scratch, 'log'),
    env,
  );
  const url = `http://127.0.0.1:${port}`;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // A generous grace: a profiled process writes its profile on the way out.
    await stopGroup(started.child, 20_000);
    await removeScratch(scratch);
  };
  try {
    await waitForHttp(`${url}/health`, started);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, child: started.child, stop };
}

/**
 * A fresh account with the raster subscription and its API key, written straight into the
 * server's database (`env` as the server's: NADIR_DATA_DIR, and NADIR_DATABASE when it is
 * elsewhere). Names are unique, so runs can share a cached database.
 */
export async function issueBenchKey(
  env: NodeJS.ProcessEnv,
  label: string,
  monthlyAllowance?: number,
  tileRateLimit?: number,
): Promise<string> {
  const dataDir = env.NADIR_DATA_DIR as string;
  const services = await createServices(parseConfig(env, dataDir), systemClock);
  try {
    const name = `bench ${label} ${randomUUID()}`;
    const account = await services.accounts.createAccount({
      name,
      rasterSubscription: true,
      monthlyAllowance,
      tileRateLimit,
    });
    return (await services.accounts.issueApiKey(account.id)).key;
  } finally {
    await services.close();
  }
}
