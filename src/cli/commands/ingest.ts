import { availableParallelism } from 'node:os';
import type { Survey } from '../../catalogue/survey.js';
import type { Config } from '../../config/config.js';
import { boundIngestMemory } from '../../ingest/ingest-memory.js';
import type { IngestQueue } from '../../ingest/ingest-queue.js';
import { readManifest } from '../../ingest/manifest.js';
import { followQueuedSurvey, sendQueuedSurvey } from '../../ingest/queued-ingest.js';
import { InProcessRunner, WorkerPool } from '../../ingest/worker-pool.js';
import { gdalStorageSettings } from '../../storage/open-storage.js';
import { type CliContext, type Command, parseCommandArgs, printJson, UsageError } from '../command.js';
import { createProgressReporter } from '../progress.js';
import { surveySummary } from '../survey-summary.js';

export const ingestCommand: Command = {
  name: 'ingest',
  summary: 'Ingest a survey from a manifest: GeoTIFFs in any CRS -> aligned EPSG:3857 COGs -> catalogue',
  usage: `nadir ingest <manifest.json> [<manifest.json> ...] [--workers N | --queue [--detach]] [--json]
nadir ingest status [--json]

  --workers N   how many worker processes write shards side by side (default: the cores;
                0: in this process)
  --queue       check the files, then send the survey to the queue on NADIR_DATABASE
                (PostgreSQL) and follow it: \`nadir worker\` on any machine with the same
                NADIR_DATABASE and NADIR_STORAGE (and the source files at the same paths) takes
                its jobs; a worker makes it visible after the last one. Stopping this command
                stops nothing
  --detach      with --queue: return once the survey is sent
  status        the surveys with jobs in that queue: done, running, waiting, failed, and an ETA

Manifest (paths relative to the manifest file):
  {"id"?: uuid, "captureDate": "YYYY-MM-DD", "firstPhotoTime"?: iso, "lastPhotoTime"?: iso,
   "timezone"?: "Area/City", "tags"?: ["disaster:hurricane"],
   "assets": {"TrueOrtho"?: path, "DetailDsm"?: path, "Vert"?: path, "North"?: path, ...}}
An asset is a path, a glob ("ortho/*.tif") or a list of them: a delivery cut into tiles, in any
CRSs; where files overlap, the later one (in list order, globs sorted by name) is kept.
A killed ingest resumes when run again on the same files: finished shards are kept.
Missing photo times default to the start and end of the capture date (in "timezone", else UTC).
Re-ingesting an id replaces the survey and bumps its version. A survey becomes visible only
once all its files are written.`,
  async run(args: string[], ctx: CliContext) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean' },
      workers: { type: 'string' },
      queue: { type: 'boolean' },
      detach: { type: 'boolean' },
    });
    if (positionals[0] === 'status' && positionals.length === 1) return queueStatus(ctx, values.json ?? false);
    if (positionals.length === 0) throw new UsageError('give at least one manifest file');
    if (values.queue && values.workers !== undefined) throw new UsageError('--queue and --workers exclude each other');
    if (values.detach && !values.queue) throw new UsageError('--detach goes with --queue');
    const workers = values.workers === undefined ? availableParallelism() : Number(values.workers);
    if (!/^\d+$/.test(values.workers ?? '0') || workers > 256) {
      throw new UsageError(`--workers must be a whole number from 0 to 256, got "${values.workers}"`);
    }
    if (values.queue) return queuedIngest(ctx, positionals, values.detach ?? false, values.json ?? false);
    boundIngestMemory();
    const { ingestor, clock } = await ctx.surveyWriter();
    const runner =
      workers === 0
        ? new InProcessRunner()
        : new WorkerPool(workers, availableParallelism(), gdalStorageSettings(ctx.config.storage));
    const results: Survey[] = [];
    try {
      for (const manifest of positionals) {
        const progress = createProgressReporter(ctx.stderr, `ingest ${manifest}`, clock);
        const survey = await ingestor.ingestManifestFile(manifest, (e) => progress.update(e.label, e.fraction), {
          runner,
        });
        progress.done(`survey ${survey.id} version ${survey.version}`);
        results.push(survey);
      }
    } finally {
      await runner.close();
    }
    if (values.json)
      printJson(ctx, results.length === 1 ? surveySummary(results[0] as Survey) : results.map(surveySummary));
    return 0;
  },
};

/** `nadir ingest --queue`: each survey checked and sent, then followed until a worker makes it visible. */
async function queuedIngest(ctx: CliContext, manifests: string[], detach: boolean, json: boolean): Promise<number> {
  const queue = await openQueue(ctx.config);
  const { ingestor, catalogue, clock } = await ctx.surveyWriter();
  const results: Survey[] = [];
  try {
    const requests = [];
    for (const path of manifests) {
      const progress = createProgressReporter(ctx.stderr, `check ${path}`, clock);
      const request = await sendQueuedSurvey(ingestor, queue, await readManifest(path), (e) =>
        progress.update(e.label, e.fraction),
      );
      progress.done(`survey ${request.manifest.id} version ${request.version} queued`);
      requests.push(request);
    }
    if (detach) {
      ctx.stderr.write('nadir worker takes the jobs; nadir ingest status shows the progress\n');
      return 0;
    }
    for (const request of requests) {
      const progress = createProgressReporter(ctx.stderr, `ingest ${request.manifest.id}`, clock);
      const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 1000));
      const version = await followQueuedSurvey(queue, request, (e) => progress.update(e.label, e.fraction), pause);
      progress.done(`survey ${request.manifest.id} version ${version}`);
      const survey = await catalogue.get(request.manifest.id);
      if (survey) results.push(survey);
    }
  } finally {
    await queue.close();
  }
  if (json) printJson(ctx, results.length === 1 ? surveySummary(results[0] as Survey) : results.map(surveySummary));
  return 0;
}

/** The ingest queue on the configured PostgreSQL; a SQLite deployment has none. */
export async function openQueue(config: Config): Promise<IngestQueue> {
  if (config.database.engine !== 'postgres') {
    throw new UsageError(
      'the ingest queue needs NADIR_DATABASE to be a postgres:// URL (workers on several machines share it)',
    );
  }
  // Loaded here: pg-boss and its driver are for queued ingest alone, not every command's start.
  const { IngestQueue } = await import('../../ingest/ingest-queue.js');
  return IngestQueue.open(config.database.url, {
    jobTimeoutSeconds: config.ingestJobTimeoutS,
    maintenanceSeconds: config.ingestQueueCheckS,
  });
}

/** `nadir ingest status`: each queued survey's jobs, with an ETA from the pace so far. */
async function queueStatus(ctx: CliContext, json: boolean): Promise<number> {
  const queue = await openQueue(ctx.config);
  try {
    const surveys = await queue.status();
    if (json) {
      printJson(ctx, surveys);
      return 0;
    }
    if (surveys.length === 0) ctx.stdout.write('no surveys in the ingest queue\n');
    for (const s of surveys) {
      const total = s.waiting + s.active + s.done + s.failed;
      const left = s.waiting + s.active;
      // Jobs run side by side: the pace is jobs finished over the time since the first started.
      const elapsed = s.startedAt && s.lastDoneAt ? (Date.parse(s.lastDoneAt) - Date.parse(s.startedAt)) / 1000 : 0;
      const eta = s.done > 0 && elapsed > 0 && left > 0 ? ` ETA ${formatSeconds((left * elapsed) / s.done)}` : '';
      const bar = progressBar(total === 0 ? 0 : s.done / total, 24);
      ctx.stdout.write(
        `${s.survey} v${s.version} ${bar} ${s.done}/${total} done, ${s.active} running, ${s.waiting} waiting, ${s.failed} failed${eta}\n`,
      );
    }
    return 0;
  } finally {
    await queue.close();
  }
}

function progressBar(fraction: number, width: number): string {
  const full = Math.round(fraction * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
}

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  if (seconds < 3600) return `${Math.ceil(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
