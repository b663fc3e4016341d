import { availableParallelism } from 'node:os';
import type { Survey } from '../../catalogue/survey.js';
import { boundIngestMemory } from '../../ingest/memory.js';
import { InProcessRunner, WorkerPool } from '../../ingest/worker-pool.js';
import { type CliContext, type Command, parseCommandArgs, printJson, UsageError } from '../command.js';
import { createProgressReporter } from '../progress.js';

export function surveySummary(survey: Survey) {
  return {
    id: survey.id,
    captureDate: survey.captureDate,
    version: survey.version,
    tags: survey.tags,
    assets: Object.fromEntries(
      Object.values(survey.assets).map((a) => [
        a?.type,
        { gsd: Number(a?.gsd.toFixed(4)), minZoom: a?.minZoom, maxZoom: a?.maxZoom },
      ]),
    ),
  };
}

export const ingestCommand: Command = {
  name: 'ingest',
  summary: 'Ingest a survey from a manifest: GeoTIFFs in any CRS -> aligned EPSG:3857 COGs -> catalogue',
  usage: `nadir ingest <manifest.json> [<manifest.json> ...] [--workers N] [--json]

  --workers N   worker processes writing shards at once (default: the cores; 0: in this process)

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
    });
    if (positionals.length === 0) throw new UsageError('give at least one manifest file');
    const workers = values.workers === undefined ? availableParallelism() : Number(values.workers);
    if (!/^\d+$/.test(values.workers ?? '0') || workers > 256) {
      throw new UsageError(`--workers must be a whole number from 0 to 256, got "${values.workers}"`);
    }
    boundIngestMemory();
    const { ingestor, clock } = await ctx.services();
    const runner = workers === 0 ? new InProcessRunner() : new WorkerPool(workers);
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
