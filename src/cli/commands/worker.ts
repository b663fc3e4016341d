import { join } from 'node:path';
import { boundIngestMemory } from '../../ingest/ingest-memory.js';
import { coordinateStep } from '../../ingest/queued-ingest.js';
import { startIngestMetrics } from '../../metrics/ingest-metrics.js';
import { gdalStorageSettings } from '../../storage/open-storage.js';
import { ingestJobSpans } from '../../tracing/ingest-spans.js';
import { Tracing } from '../../tracing/tracing.js';
import { type CliContext, type Command, parseCommandArgs, wholeNumber } from '../command.js';
import { openQueue } from './ingest.js';

export const workerCommand: Command = {
  name: 'worker',
  summary: 'Take ingest jobs from the queue on NADIR_DATABASE (PostgreSQL) until stopped',
  usage: `nadir worker [--jobs N]

  --jobs N   how many jobs this process runs side by side (default 1); GDAL's threads are the
             cores shared out

Takes the jobs \`nadir ingest --queue\` sends, on any machine with the same NADIR_DATABASE and
NADIR_STORAGE (and the source files at the same paths): each output is written in a temporary
folder of this process's own (under the data folder's staging/) and put into the survey storage.
Besides its job slots, a worker coordinates one queued survey at a time: it sends the survey's
jobs, waits for them and makes the survey visible after the last one. SIGINT or SIGTERM: stop
taking jobs, finish the ones in hand, exit. A worker killed in a job loses nothing: the job goes
to another worker after NADIR_INGEST_JOB_TIMEOUT_S.`,
  async run(args: string[], ctx: CliContext) {
    const { values } = parseCommandArgs(args, { jobs: { type: 'string' } }, false);
    const jobs = wholeNumber('--jobs', values.jobs ?? '1', 1, 64);
    boundIngestMemory();
    const queue = await openQueue(ctx.config);
    const { storage, clock, ingestor, catalogue } = await ctx.surveyWriter();
    const workDir = join(ctx.config.dataDir, 'staging', `worker.${process.pid}`);
    const say = (line: string) => ctx.stderr.write(`${clock().toISOString()} ${line}\n`);
    // NADIR_METRICS_PORT: this worker's jobs and the queue's, for Prometheus (docs/operations.md).
    const measured = await startIngestMetrics(queue, ctx.config.metrics);
    // OTEL_*: a span per job (docs/operations.md).
    const tracing = ctx.config.tracing && new Tracing(ctx.config.tracing, ctx.config.serverId);
    const traceJob = tracing && ingestJobSpans(tracing);
    const stop = await queue.work(storage, workDir, jobs, gdalStorageSettings(ctx.config.storage), (event) => {
      measured?.metrics.job(event);
      traceJob?.(event);
      const { state, label, seconds, error } = event;
      if (state === 'started') say(`started ${label}`);
      else if (error) say(`failed ${label} after ${seconds.toFixed(1)} s: ${error}`);
      else say(`done ${label} in ${seconds.toFixed(1)} s`);
    });
    const stopSurveys = await queue.workSurveys(async (request) => {
      const name = `survey ${request.manifest.id} v${request.version}`;
      say(`coordinating ${name} (step ${request.step})`);
      try {
        const outcome = await coordinateStep({ ingestor, queue, catalogue }, request);
        say(outcome.committed ? `${name} is visible` : `${name}: step ${outcome.next} goes on`);
        return outcome;
      } catch (error) {
        say(`coordinating ${name} failed: ${(error as Error).message}`);
        throw error;
      }
    });
    // Before the line: whoever reads it may signal at once, and a signal before its handler kills.
    const stopped = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    say(`nadir worker ${process.pid}: taking ingest jobs, ${jobs} at a time`);
    await stopped;
    say('stopping: finishing the jobs in hand');
    await stopSurveys();
    await stop();
    await measured?.endpoint.close();
    await tracing?.close();
    await queue.close();
    return 0;
  },
};
