/**
 * The real `nadir serve` (compiled, through bin/nadir) over the benchmark survey's data folder, with
 * an account, its key and one transaction token for the benchmark AOI: every imagery request of a
 * run uses that token (billed once), as a client downloading several sizes of one area would.
 */
import type { RasterType } from '../../src/catalogue/survey.js';
import { issueBenchKey, startNadirServe } from '../load/nadir-serve.js';
import type { Service } from '../load/processes.js';
import type { BenchSurvey } from './source.js';

export interface RasterServer extends Service {
  url: string;
  /** The server process, whose memory is read from /proc. */
  pid: number;
  imageryUrl(type: RasterType, format: string, size: number): string;
}

export async function startRasterServer(bench: BenchSurvey, dataDir: string, radius: number): Promise<RasterServer> {
  const env = { NADIR_DATA_DIR: dataDir };
  // The default allowance is 0; the one token of a run is billed once.
  const apiKey = await issueBenchKey(env, 'raster', 100);
  const { url, child, stop } = await startNadirServe({ env, label: 'raster-serve' });
  try {
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
    return { url, pid: child.pid as number, imageryUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
