/**
 * Ingest benchmark, fleet part (issue 31, item 4): the generated delivery ingested through the
 * queue by two `nadir worker` processes, each with a data folder of its own, sharing one
 * PostgreSQL and one S3 server (the test suite's throwaway servers, test/support/servers.ts).
 *
 * Per product, two runs of the same files under two survey ids:
 * - **uninterrupted**: `nadir ingest --queue --detach`, then the two workers coordinate the survey
 *   and take its jobs until it is visible;
 * - **killed**: the same, but the worker coordinating the survey is killed with SIGKILL in the
 *   middle of a job (after it finished `killAfterJobs` of them). The other worker must take over
 *   the coordinating step and the lost job once they outlive NADIR_INGEST_JOB_TIMEOUT_S.
 * Timed from the send to the survey's first visibility in the catalogue (polled every 250 ms); at
 * that moment every file the survey names must be in the bucket. Then every stored file of the
 * killed run is compared byte for byte with the uninterrupted run's: identical COGs serve
 * identical tiles (pass-through sends their bytes; composites decode the same pixels).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { Survey } from '../../src/catalogue/survey.js';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { assetFiles } from '../../src/geo/asset-layout.js';
import { startPostgres, startS3 } from '../../test/support/servers.js';
import type { GeneratedDelivery } from './delivery-generate.js';
import type { DeliveryProduct, FleetProduct, FleetRun } from './delivery-raw.js';
import { ProcessTreeSampler } from './proc-tree.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/nadir');
/** A shard of the full delivery takes well under a minute on one worker; a lost job waits this out. */
export const FLEET_JOB_TIMEOUT_S = 150;
const FLEET_QUEUE_CHECK_S = 10;

interface Worker {
  name: string;
  child: ChildProcess;
  log: string;
  sampler: ProcessTreeSampler;
}

function startWorker(name: string, env: NodeJS.ProcessEnv): Worker {
  const child = spawn(process.execPath, [BIN, 'worker'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  if (child.pid === undefined) throw new Error('could not start nadir worker');
  const worker: Worker = { name, child, log: '', sampler: new ProcessTreeSampler(child.pid, 200) };
  child.stderr?.on('data', (chunk: Buffer) => {
    worker.log += chunk.toString();
  });
  return worker;
}

function count(worker: Worker, word: 'started' | 'done'): number {
  return worker.log.split('\n').filter((line) => line.includes(` ${word} `)).length;
}

async function stopWorker(worker: Worker): Promise<void> {
  if (worker.child.exitCode === null && worker.child.signalCode === null) {
    const exited = new Promise((done) => worker.child.once('exit', done));
    worker.child.kill('SIGTERM');
    await exited;
  }
}

async function sleep(ms: number): Promise<void> {
  await new Promise((done) => setTimeout(done, ms));
}

/** Every key under `prefix` with its bytes' size. */
async function listed(services: Services, prefix: string): Promise<Map<string, number>> {
  const keys = new Map<string, number>();
  for await (const { key, size } of services.storage.list(prefix)) keys.set(key, size);
  return keys;
}

async function sendAndWait(
  services: Services,
  env: NodeJS.ProcessEnv,
  tmp: string,
  product: DeliveryProduct,
  manifest: string,
  id: string,
  mode: FleetRun['mode'],
  killAfterJobs: number,
  unfinishedJobs: (id: string) => Promise<number>,
  log: (line: string) => void,
): Promise<FleetRun> {
  const workers = ['a', 'b'].map((name) =>
    startWorker(name, { ...env, NADIR_DATA_DIR: join(tmp, `fleet-${product.name}-${mode}-${name}`) }),
  );
  const run: FleetRun = {
    mode,
    product: product.name,
    survey: id,
    ok: false,
    seconds: 0,
    megapixelsPerSecond: 0,
    sendSeconds: 0,
    jobsDone: {},
    workerPeakRssBytes: {},
    coordinatingSteps: 0,
    retried: { jobs: 0, steps: 0 },
    storedFiles: 0,
    storedBytes: 0,
    visibleBeforeDone: false,
    missingAtVisibility: [],
  };
  try {
    while (!workers.every((w) => w.log.includes('taking ingest jobs'))) await sleep(100);
    const started = performance.now();
    const sent = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = spawn(process.execPath, [BIN, 'ingest', manifest, '--queue', '--detach'], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => done({ code, stderr }));
    });
    run.sendSeconds = (performance.now() - started) / 1000;
    if (sent.code !== 0) throw new Error(`nadir ingest --queue --detach: ${sent.stderr.trim().split('\n').pop()}`);
    let survey: Survey | undefined;
    let victim: Worker | undefined;
    while (!survey) {
      await sleep(250);
      if (mode === 'killed' && !run.killed) {
        victim = workers.find((w) => w.log.includes(`coordinating survey ${id}`));
        if (victim && count(victim, 'done') >= killAfterJobs && count(victim, 'started') > count(victim, 'done')) {
          victim.child.kill('SIGKILL');
          run.killed = {
            worker: victim.name,
            afterSeconds: (performance.now() - started) / 1000,
            jobsDoneBefore: count(victim, 'done'),
            wasCoordinating: true,
          };
          log(`    SIGKILL to worker ${victim.name} (coordinating) after ${run.killed.jobsDoneBefore} jobs`);
        }
      }
      if (workers.every((w) => w.child.exitCode !== null || w.child.signalCode !== null)) {
        throw new Error('every worker exited before the survey was visible');
      }
      survey = await services.catalogue.get(id);
    }
    run.seconds = (performance.now() - started) / 1000;
    run.visibleBeforeDone = (await unfinishedJobs(id)) > 0;
    // At the moment it became visible, every file it names is in the bucket.
    const stored = await listed(services, `surveys/${id}/`);
    for (const asset of Object.values(survey.assets)) {
      for (const key of asset ? assetFiles(asset) : []) if (!stored.has(key)) run.missingAtVisibility.push(key);
    }
    run.storedFiles = stored.size;
    run.storedBytes = [...stored.values()].reduce((a, b) => a + b, 0);
    run.megapixelsPerSecond = product.pixels / 1e6 / run.seconds;
    for (const w of workers) run.jobsDone[w.name] = count(w, 'done');
    run.ok =
      !run.visibleBeforeDone &&
      run.missingAtVisibility.length === 0 &&
      (mode === 'uninterrupted' || run.killed !== undefined);
    if (mode === 'killed' && !run.killed)
      run.error = 'the survey finished before the coordinating worker could be killed';
    return run;
  } catch (error) {
    run.error = (error as Error).message;
    return run;
  } finally {
    await Promise.all(workers.map(stopWorker));
    for (const w of workers) {
      const memory = w.sampler.stop();
      run.workerPeakRssBytes[w.name] = Math.max(0, ...memory.processes.map((p) => p.peakRssBytes));
      await writeFile(join(tmp, `fleet-${product.name}-${mode}-${w.name}.log`), w.log);
    }
  }
}

/** Both runs of one product, then the byte comparison of what they stored. */
export async function runFleet(
  tmp: string,
  delivery: GeneratedDelivery,
  options: { quick: boolean; log: (line: string) => void },
): Promise<FleetProduct[]> {
  const { log } = options;
  const [pg, s3] = await Promise.all([startPostgres(), startS3('fleet')]);
  const results: FleetProduct[] = [];
  try {
    const database = await pg.createDatabase('fleet');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...s3.env,
      NADIR_DATABASE: database,
      NADIR_STORAGE: 's3://fleet/bench',
      NADIR_TOKEN_SECRETS: `k1:${Buffer.alloc(32, 9).toString('base64')}`,
      NADIR_INGEST_JOB_TIMEOUT_S: String(FLEET_JOB_TIMEOUT_S),
      NADIR_INGEST_QUEUE_CHECK_S: String(FLEET_QUEUE_CHECK_S),
      NADIR_LOG_LEVEL: 'warn',
    };
    const dataDir = join(tmp, 'fleet-observer');
    await mkdir(dataDir, { recursive: true });
    const services = await createServices(parseConfig({ ...env, NADIR_DATA_DIR: dataDir }, tmp), () => new Date());
    try {
      for (const [index, product] of delivery.products.entries()) {
        const runs: FleetRun[] = [];
        for (const [m, mode] of (['uninterrupted', 'killed'] as const).entries()) {
          const id = `f1ee0000-0000-4000-8000-0000000000${index}${m}`;
          const original = JSON.parse(await readFile(delivery.manifests[product.name], 'utf8')) as object;
          const manifest = join(delivery.dir, `${product.name}-fleet-${mode}.json`);
          await writeFile(manifest, JSON.stringify({ ...original, id }));
          log(`fleet, ${product.name}: ${mode} (${relative(tmp, manifest)})`);
          const run = await sendAndWait(
            services,
            env,
            tmp,
            product,
            manifest,
            id,
            mode,
            options.quick ? 1 : 2,
            async (survey) =>
              Number(
                await pg.psql(
                  'fleet',
                  `SELECT count(*) FROM nadir_ingest_queue.job WHERE name = 'nadir-ingest' AND data->>'survey' = '${survey}' AND state <> 'completed'`,
                ),
              ),
            log,
          );
          const retried = await pg.psql(
            'fleet',
            `SELECT name, count(*) FILTER (WHERE retry_count > 0), max((data->>'step')::int)
             FROM nadir_ingest_queue.job WHERE coalesce(data->>'survey', data->'manifest'->>'id') = '${id}' GROUP BY name`,
          );
          for (const line of retried.trim().split('\n')) {
            const [name, n, step] = line.split('|');
            if (name === 'nadir-ingest') run.retried.jobs = Number(n);
            if (name === 'nadir-ingest-survey') {
              run.retried.steps = Number(n);
              run.coordinatingSteps = Number(step) + 1;
            }
          }
          log(
            run.ok
              ? `  ${run.seconds.toFixed(1)} s, ${run.megapixelsPerSecond.toFixed(2)} MP/s, jobs ${JSON.stringify(run.jobsDone)}, ` +
                  `${run.coordinatingSteps} steps, retried ${run.retried.jobs} jobs / ${run.retried.steps} steps`
              : `  failed: ${run.error ?? `missing ${run.missingAtVisibility.join(', ')}`}`,
          );
          runs.push(run);
        }
        results.push({ product: product.name, runs, ...(await compareRuns(services, runs)) });
        const last = results.at(-1) as FleetProduct;
        log(
          `  byte-identical: ${last.identicalFiles}/${last.comparedFiles} files${last.differing.length ? `, differ: ${last.differing.join(', ')}` : ''}`,
        );
      }
    } finally {
      await services.close();
    }
    return results;
  } finally {
    await Promise.all([pg.stop(), s3.stop()]);
  }
}

/** The two runs' stored files, by their path under the survey's version, compared byte for byte. */
async function compareRuns(
  services: Services,
  runs: FleetRun[],
): Promise<Pick<FleetProduct, 'comparedFiles' | 'identicalFiles' | 'differing'>> {
  const [a, b] = runs;
  if (!a?.ok || !b?.ok) return { comparedFiles: 0, identicalFiles: 0, differing: ['a run failed'] };
  const files = async (run: FleetRun) => {
    const survey = (await services.catalogue.get(run.survey)) as Survey;
    const prefix = `surveys/${run.survey}/v${survey.version}/`;
    return new Map(
      [...(await listed(services, prefix))].map(([key, size]) => [key.slice(prefix.length), { key, size }]),
    );
  };
  const [ours, theirs] = [await files(a), await files(b)];
  const names = new Set([...ours.keys(), ...theirs.keys()]);
  const differing: string[] = [];
  let identical = 0;
  for (const name of [...names].sort()) {
    const x = ours.get(name);
    const y = theirs.get(name);
    if (!x || !y || x.size !== y.size) {
      differing.push(name);
      continue;
    }
    const [bx, by] = await Promise.all([
      services.storage.source(x.key).fetch(0, x.size),
      services.storage.source(y.key).fetch(0, y.size),
    ]);
    if (Buffer.from(bx).equals(Buffer.from(by))) identical++;
    else differing.push(name);
  }
  return { comparedFiles: names.size, identicalFiles: identical, differing };
}
