import type { Survey } from '../../catalogue/survey.js';
import { boundIngestMemory } from '../../ingest/memory.js';
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
  usage: `nadir ingest <manifest.json> [<manifest.json> ...] [--json]

Manifest (paths relative to the manifest file):
  {"id"?: uuid, "captureDate": "YYYY-MM-DD", "firstPhotoTime"?: iso, "lastPhotoTime"?: iso,
   "timezone"?: "Area/City", "tags"?: ["disaster:hurricane"],
   "assets": {"TrueOrtho"?: path, "DetailDsm"?: path, "Vert"?: path, "North"?: path, ...}}
Missing photo times default to the start and end of the capture date (in "timezone", else UTC).
Re-ingesting an id replaces the survey and bumps its version. A survey becomes visible only
once all its files are written.`,
  async run(args: string[], ctx: CliContext) {
    const { values, positionals } = parseCommandArgs(args, { json: { type: 'boolean' } });
    if (positionals.length === 0) throw new UsageError('give at least one manifest file');
    boundIngestMemory();
    const { ingestor, clock } = await ctx.services();
    const results: Survey[] = [];
    for (const manifest of positionals) {
      const progress = createProgressReporter(ctx.stderr, `ingest ${manifest}`, clock);
      const survey = await ingestor.ingestManifestFile(manifest, (e) => progress.update(e.label, e.fraction));
      progress.done(`survey ${survey.id} version ${survey.version}`);
      results.push(survey);
    }
    if (values.json)
      printJson(ctx, results.length === 1 ? surveySummary(results[0] as Survey) : results.map(surveySummary));
    return 0;
  },
};
