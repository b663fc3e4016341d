/**
 * Queued ingest across processes, with real servers (test/support/servers.ts): PostgreSQL holds the
 * queue (pg-boss) and the catalogue, an S3 server (s3rver) the survey files. A survey is sent and
 * nothing of the sender runs afterwards; two `nadir worker` processes, each with a data folder of
 * its own, coordinate it and take its jobs; the one coordinating is killed with SIGKILL in the
 * middle of a job. The other takes over both, nothing is visible before the last job, and the
 * stored shards are byte for byte those of an ingest that ran uninterrupted in one process.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { Asset, Survey } from '../../src/catalogue/survey.js';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { assetFiles } from '../../src/geo/asset-layout.js';
import { IngestQueue } from '../../src/ingest/ingest-queue.js';
import { SurveyIngestor } from '../../src/ingest/ingest-survey.js';
import { readManifest } from '../../src/ingest/manifest.js';
import { followQueuedSurvey, sendQueuedSurvey } from '../../src/ingest/queued-ingest.js';
import { InProcessRunner } from '../../src/ingest/worker-pool.js';
import { IngestWorkspace } from '../../src/ingest/workspace.js';
import { testClock } from '../support/clock.js';
import { cliArgs, REALDATA, run, SKIP_REALDATA, tempDir, writeManifest } from '../support/fixtures.js';
import { type PostgresServer, type S3Server, SKIP_POSTGRES, startPostgres, startS3 } from '../support/servers.js';

const exec = promisify(execFile);
const ORTHO = join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif');
const QUEUED = '9e0e0000-0000-4000-8000-000000000001';
const LOCAL = '9e0e0000-0000-4000-8000-000000000002';

interface Worker {
  child: ChildProcess;
  log: string;
  /** Looked at as each piece of its log arrives, so that a moment lasting a few ms is not missed. */
  onLog?: () => void;
}

function startWorker(env: NodeJS.ProcessEnv): Worker {
  const child = spawn(process.execPath, cliArgs('worker'), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const worker: Worker = { child, log: '' };
  child.stderr?.on('data', (chunk) => {
    worker.log += chunk;
    worker.onLog?.();
  });
  return worker;
}

function jobs(worker: Worker, state: 'started' | 'done'): number {
  return worker.log.split('\n').filter((line) => line.includes(` ${state} `)).length;
}

async function until(what: string, check: () => boolean, ms = 60_000, logs = () => ''): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(logs())}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('queued ingest on two worker processes over PostgreSQL and S3', {
  skip: SKIP_POSTGRES || SKIP_REALDATA,
}, () => {
  let pg: PostgresServer;
  let s3: S3Server;
  let dir: { path: string; remove: () => Promise<void> };
  let env: NodeJS.ProcessEnv;
  let services: Services;
  let queue: IngestQueue;
  const workers: Worker[] = [];

  before(async () => {
    [pg, s3, dir] = await Promise.all([startPostgres(), startS3('imagery'), tempDir('nadir-queue-')]);
    const database = await pg.createDatabase('nadir');
    env = {
      ...process.env,
      ...s3.env,
      NADIR_DATABASE: database,
      NADIR_STORAGE: 's3://imagery/fleet',
      NADIR_TOKEN_SECRETS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
      // A job outliving 6 s counts as lost (a shard here takes well under a second); looked for every second.
      NADIR_INGEST_JOB_TIMEOUT_S: '6',
      NADIR_INGEST_QUEUE_CHECK_S: '1',
      NADIR_LOG_LEVEL: 'silent',
    };
    const config = parseConfig({ ...env, NADIR_DATA_DIR: join(dir.path, 'coordinator') }, dir.path);
    services = await createServices(config, testClock().now);
    queue = await IngestQueue.open(database, { jobTimeoutSeconds: 6, maintenanceSeconds: 1, pollSeconds: 0.2 });
    // A delivery of four files, two of them in another CRS (as in sharded.test.ts).
    const delivery = join(dir.path, 'delivery');
    await mkdir(delivery, { recursive: true });
    const info = JSON.parse((await exec('gdalinfo', ['-json', ORTHO])).stdout) as { size: [number, number] };
    const [w, h] = info.size.map((n) => Math.ceil(n / 2)) as [number, number];
    for (const [i, [x, y]] of [
      [0, 0],
      [w, 0],
      [0, h],
      [w, h],
    ].entries()) {
      const piece = join(delivery, `piece_${i}.tif`);
      if (i < 2) await run('gdal_translate', ['-q', '-srcwin', `${x}`, `${y}`, `${w}`, `${h}`, ORTHO, piece]);
      else {
        const utm16 = join(delivery, `utm16_${i}.tif`);
        await run('gdal_translate', ['-q', '-srcwin', `${x}`, `${y}`, `${w}`, `${h}`, ORTHO, utm16]);
        await run('gdalwarp', ['-q', '-t_srs', 'EPSG:32615', '-r', 'bilinear', '-dstalpha', utm16, piece]);
        await rm(utm16);
      }
    }
  });

  after(async () => {
    for (const { child } of workers) child.kill('SIGKILL');
    await queue?.close();
    await services?.close();
    await Promise.all([pg?.stop(), s3?.stop()]);
    await dir?.remove();
  });

  function ingestor(): SurveyIngestor {
    return new SurveyIngestor({
      catalogue: services.catalogue,
      storage: services.storage,
      clock: services.clock,
      workspace: new IngestWorkspace(join(dir.path, 'coordinator')),
      // 256 px shards: this small raster becomes a few dozen jobs for two workers to share.
      shardLevels: 0,
      // Not the workers' default (95): the coordinator's setting travels with each job.
      jpegQuality: 85,
    });
  }

  test('two workers share a sent survey; the one coordinating is killed mid-job; the other finishes it', async () => {
    for (const name of ['worker-a', 'worker-b']) {
      workers.push(startWorker({ ...env, NADIR_DATA_DIR: join(dir.path, name) }));
    }
    await until('both workers to start', () => workers.every((w) => w.log.includes('taking ingest jobs')));
    const manifest = await writeManifest(join(dir.path, 'delivery'), 'queued', {
      id: QUEUED,
      captureDate: '2021-07-02',
      assets: { Vert: '*.tif' },
    });
    // What `nadir ingest --queue --detach` does; after it, nothing on this side runs for the survey.
    const request = await sendQueuedSurvey(ingestor(), queue, await readManifest(manifest), () => {});
    assert.equal(request.version, 1);
    // Killed in a job: after it finished one, as it starts another, while it coordinates the survey.
    // A shard job here lasts 25-100 ms, so the kill is sent from the log handler as the job's
    // "started" line arrives, not by polling (which can miss every such moment).
    let killed: Worker | undefined;
    for (const w of workers) {
      w.onLog = () => {
        const inJob = jobs(w, 'done') >= 1 && jobs(w, 'started') > jobs(w, 'done');
        if (killed || !inJob || !w.log.includes(`coordinating survey ${QUEUED}`)) return;
        killed = w;
        w.child.kill('SIGKILL');
      };
    }
    await until(
      'the coordinating worker to finish a job and start the next',
      () => killed !== undefined,
      60_000,
      () => workers.map((w) => w.log).join(' | '),
    );
    const a = killed as Worker;
    const b = workers.find((w) => w !== a) as Worker;
    const killedAfter = jobs(a, 'done');
    assert.equal(await services.catalogue.get(QUEUED), undefined, 'nothing visible while jobs remain');
    const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 200));
    assert.equal(await followQueuedSurvey(queue, request, () => {}, pause), 1);
    const survey = (await services.catalogue.get(QUEUED)) as Survey;
    assert.match(b.log, new RegExp(`coordinating survey ${QUEUED} v1`), 'worker B took over the survey');
    assert.match(b.log, new RegExp(`survey ${QUEUED} v1 is visible`));
    assert.ok(jobs(b, 'done') >= 1, 'worker B did part of it');
    for (const queueName of ['nadir-ingest', 'nadir-ingest-survey']) {
      const retried = await pg.psql(
        'nadir',
        `SELECT count(*) FROM nadir_ingest_queue.job WHERE name = '${queueName}' AND retry_count > 0`,
      );
      assert.ok(Number(retried.trim()) >= 1, `what worker A held in ${queueName} was retried (${retried.trim()})`);
    }
    assert.ok(killedAfter >= 1, 'worker A did part of it');
    // Steps wait 3 s at most (half the job timeout): the survey outlived one, the next went on.
    const steps = await pg.psql(
      'nadir',
      `SELECT max((data->>'step')::int) FROM nadir_ingest_queue.job WHERE data->'manifest'->>'id' = '${QUEUED}'`,
    );
    assert.ok(Number(steps.trim()) >= 1, `coordinated in ${Number(steps.trim()) + 1} steps`);
    const asset = survey.assets.Vert as Asset;
    assert.ok(asset.shards && asset.shards.tiles.length / 2 >= 4, 'sharded into several jobs');
    // What workers leave in the bucket besides the survey's files: nothing.
    const keys: string[] = [];
    for await (const { key } of services.storage.list(`surveys/${QUEUED}/`)) keys.push(key);
    assert.deepEqual(keys.sort(), assetFiles(asset).sort());

    const status = await exec(process.execPath, cliArgs('ingest', 'status', '--json'), { env });
    const rows = JSON.parse(status.stdout) as Array<{ survey: string; done: number; waiting: number; failed: number }>;
    const row = rows.find((r) => r.survey === QUEUED);
    assert.ok(row && row.done >= asset.shards.tiles.length / 2 && row.waiting === 0 && row.failed === 0);
    const text = await exec(process.execPath, cliArgs('ingest', 'status'), { env });
    assert.match(text.stdout, new RegExp(`${QUEUED} v1 \\[#+\\] \\d+/\\d+ done`));
  });

  test("a file GDAL cannot read to its end fails the queued ingest with its name and GDAL's message", async () => {
    const delivery = join(dir.path, 'truncated');
    await mkdir(delivery, { recursive: true });
    const whole = await readFile(join(dir.path, 'delivery', 'piece_0.tif'));
    // The first 60 % of the file: GDAL reads what is there and fails where it ends.
    await writeFile(join(delivery, 'cut.tif'), whole.subarray(0, Math.floor(whole.length * 0.6)));
    const manifest = await writeManifest(delivery, 'cut', {
      id: '9e0e0000-0000-4000-8000-000000000003',
      captureDate: '2021-07-02',
      assets: { Vert: 'cut.tif' },
    });
    await assert.rejects(ingestor().ingestManifestFile(manifest, undefined, { queue }), (error: Error) => {
      // Whichever step meets the cut (the source check, or a worker's warp), the file and what GDAL said.
      assert.match(error.message, /cut\.tif: .*failed/);
      assert.doesNotMatch(error.message, /\n/);
      return true;
    });
    assert.equal(await services.catalogue.get('9e0e0000-0000-4000-8000-000000000003'), undefined);
  });

  test('the stored shards equal, byte for byte, an ingest of the same files in one process', async () => {
    const queued = (await services.catalogue.get(QUEUED)) as Survey;
    const local = await ingestor().ingest(
      {
        id: LOCAL,
        captureDate: '2021-07-02',
        firstPhotoTime: '2021-07-02T00:00:00Z',
        lastPhotoTime: '2021-07-02T23:59:59Z',
        tags: [],
        assets: { Vert: join(dir.path, 'delivery', '*.tif') },
      },
      undefined,
      { runner: new InProcessRunner() },
    );
    const ours = queued.assets.Vert as Asset;
    const theirs = local.assets.Vert as Asset;
    assert.deepEqual(ours.shards?.tiles, theirs.shards?.tiles);
    const files = [assetFiles(ours), assetFiles(theirs)];
    assert.equal(files[0]?.length, files[1]?.length);
    for (const [i, key] of (files[0] as string[]).entries()) {
      const other = (files[1] as string[])[i] as string;
      assert.ok((await stored(services, key)).equals(await stored(services, other)), `${key} differs from ${other}`);
    }
    // GDAL reads the quality back from the JPEG tables: the coordinator's, not the workers'.
    const shard = join(dir.path, 'shard.tif');
    await writeFile(shard, await stored(services, (files[0] as string[])[1] as string));
    const info = JSON.parse((await exec('gdalinfo', ['-json', shard])).stdout);
    assert.equal(info.metadata.IMAGE_STRUCTURE?.JPEG_QUALITY, '85');
  });

  test('nadir ingest --queue --detach returns once sent; run again, it follows the same version to the end', async () => {
    const id = '9e0e0000-0000-4000-8000-000000000004';
    const manifest = await writeManifest(join(dir.path, 'delivery'), 'cli', {
      id,
      captureDate: '2021-07-02',
      assets: { Vert: 'piece_0.tif' },
    });
    const sent = await exec(process.execPath, cliArgs('ingest', manifest, '--queue', '--detach'), { env });
    assert.match(sent.stderr, new RegExp(`survey ${id} version 1 queued`));
    assert.match(sent.stderr, /nadir ingest status/);
    const followed = await exec(process.execPath, cliArgs('ingest', manifest, '--queue', '--json'), { env });
    const summary = JSON.parse(followed.stdout) as { id: string; version: number };
    assert.deepEqual([summary.id, summary.version], [id, 1], 'the pending version, not a second one');
    assert.equal((await services.catalogue.get(id))?.version, 1);
    const steps = await pg.psql(
      'nadir',
      `SELECT count(*) FROM nadir_ingest_queue.job WHERE name = 'nadir-ingest-survey' AND data->'manifest'->>'id' = '${id}' AND (data->>'step')::int = 0`,
    );
    assert.equal(steps.trim(), '1', 'sent once');
  });
});

/** A stored file's bytes, through the storage's own range reads. */
async function stored(services: Services, key: string): Promise<Buffer> {
  let size = 0;
  for await (const object of services.storage.list(key)) if (object.key === key) size = object.size;
  assert.ok(size > 0, `${key} is stored`);
  return Buffer.from(await services.storage.source(key).fetch(0, size));
}
