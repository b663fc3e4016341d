/**
 * The real `nadir serve` (compiled, through bin/nadir) over one cached benchmark catalogue: the
 * catalogue file is the server's database (NADIR_DATABASE), so a 1M-survey file is never copied;
 * the account and key the requests use are added to it first.
 */
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createServices } from '../src/composition.js';
import { parseConfig } from '../src/config/config.js';
import {
  freePort,
  removeScratch,
  type Service,
  scratchDir,
  startGroup,
  stopGroup,
  waitForHttp,
} from './load/processes.js';

const ROOT = join(import.meta.dirname, '..');

export interface CoverageServer extends Service {
  url: string;
  apiKey: string;
  /** CPU seconds (user + system) used so far by the server's processes: robust to a busy machine. */
  cpuSeconds(): Promise<number>;
}

export interface CoverageServerOptions {
  database: string;
  /** NADIR_WORKERS; undefined leaves serve's default (one process). */
  workers?: string;
  /** Write a V8 CPU profile per process here when the server stops. */
  cpuProfileDir?: string;
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

async function issueKey(database: string, dataDir: string): Promise<string> {
  const services = createServices(parseConfig({ NADIR_DATA_DIR: dataDir, NADIR_DATABASE: database }, dataDir));
  try {
    // Names are unique: every run (and every server of a run) gets its own account in the cached file.
    const name = `bench coverage ${randomUUID()}`;
    const account = await services.accounts.createAccount({ name, rasterSubscription: true });
    return (await services.accounts.issueApiKey(account.id)).key;
  } finally {
    await services.close();
  }
}

export async function startCoverageServer(options: CoverageServerOptions): Promise<CoverageServer> {
  const dataDir = await scratchDir('coverage-serve');
  const apiKey = await issueKey(options.database, dataDir);
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    NADIR_DATA_DIR: dataDir,
    NADIR_DATABASE: options.database,
    NADIR_PORT: `${port}`,
    NADIR_HOST: '127.0.0.1',
    // As the issue asks: production logs warnings, not one line per request.
    NADIR_LOG_LEVEL: 'warn',
  };
  if (options.workers !== undefined) env.NADIR_WORKERS = options.workers;
  const profile = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const started = startGroup(
    process.execPath,
    [...profile, join(ROOT, 'bin/nadir'), 'serve'],
    join(dataDir, 'log'),
    env,
  );
  const url = `http://127.0.0.1:${port}`;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // A profiled process writes its profile on the way out: give it time.
    await stopGroup(started.child, 20_000);
    await removeScratch(dataDir);
  };
  try {
    await waitForHttp(`${url}/health`, started);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, apiKey, stop, cpuSeconds: () => groupCpuSeconds(started.child.pid) };
}
