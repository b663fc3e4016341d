/**
 * The real `nadir serve` (compiled, through bin/nadir) over the benchmark survey's data folder, with
 * an account, its key and one transaction token for the benchmark AOI: every imagery request of a
 * run uses that token (billed once), as a client downloading several sizes of one area would.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { RasterType } from '../src/catalogue/survey.js';
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
import type { BenchSurvey } from './raster-source.js';

const ROOT = join(import.meta.dirname, '..');

export interface RasterServer extends Service {
  url: string;
  /** The server process, whose memory is read from /proc. */
  pid: number;
  imageryUrl(type: RasterType, format: string, size: number): string;
}

async function issueKey(dataDir: string): Promise<string> {
  const services = createServices(parseConfig({ NADIR_DATA_DIR: dataDir }, dataDir));
  try {
    const name = `bench raster ${randomUUID()}`;
    // The default allowance is 0; the one token of a run is billed once.
    const account = await services.accounts.createAccount({ name, rasterSubscription: true, monthlyAllowance: 100 });
    return (await services.accounts.issueApiKey(account.id)).key;
  } finally {
    await services.close();
  }
}

export async function startRasterServer(bench: BenchSurvey, dataDir: string, radius: number): Promise<RasterServer> {
  const apiKey = await issueKey(dataDir);
  const scratch = await scratchDir('raster-serve');
  const port = await freePort();
  const env = {
    NADIR_DATA_DIR: dataDir,
    NADIR_PORT: `${port}`,
    NADIR_HOST: '127.0.0.1',
    NADIR_LOG_LEVEL: 'warn',
  };
  const started = startGroup(process.execPath, [join(ROOT, 'bin/nadir'), 'serve'], join(scratch, 'log'), env);
  const url = `http://127.0.0.1:${port}`;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopGroup(started.child);
    await removeScratch(scratch);
  };
  try {
    await waitForHttp(`${url}/health`, started);
    const point = `${bench.centre.lon},${bench.centre.lat}`;
    const coverage = `${url}/staticmap/v2/coverage.json?apikey=${apiKey}&point=${point}&radius=${radius}&resources=TrueOrtho`;
    const answer = (await (await fetch(coverage)).json()) as { transactionToken?: string; surveys?: { id: string }[] };
    if (!answer.transactionToken || !answer.surveys?.some((s) => s.id === bench.survey.id)) {
      throw new Error(`the server does not list the benchmark survey: ${JSON.stringify(answer).slice(0, 300)}`);
    }
    const token = answer.transactionToken;
    const imageryUrl = (type: RasterType, format: string, size: number) =>
      `${url}/staticmap/v2/surveys/${bench.survey.id}/${type}.${format}?transactionToken=${token}` +
      `&point=${point}&radius=${radius}&size=${size}x${size}`;
    return { url, pid: started.child.pid as number, imageryUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
