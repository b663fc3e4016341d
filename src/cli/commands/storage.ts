import { collectGarbage, INGEST_GRACE_MS, RETIRED_GRACE_MS } from '../../storage/garbage.js';
import { type CliContext, type Command, parseCommandArgs, printJson, UsageError, wholeNumber } from '../command.js';

function minutes(option: string, text: string | undefined, fallbackMs: number): number {
  if (text === undefined) return fallbackMs;
  // In minutes, up to what milliseconds can count exactly.
  return wholeNumber(`--${option} (minutes)`, text, 0, Math.floor(Number.MAX_SAFE_INTEGER / 60_000)) * 60_000;
}

export const storageCommand: Command = {
  name: 'storage',
  summary: 'Remove survey files nothing needs (NADIR_STORAGE: the data folder or s3://bucket/prefix)',
  usage: `nadir storage gc [--dry-run] [--grace MINUTES] [--ingest-grace MINUTES] [--json]

Deletes the files of survey versions that a re-ingest replaced or a delete removed more than
--grace minutes ago (default ${RETIRED_GRACE_MS / 60_000}: servers may read them until then), and files no catalogue row
names (an ingest killed between upload and commit), except the newest version of a survey whose
ingest began less than --ingest-grace minutes ago (default ${INGEST_GRACE_MS / 60_000}: it may still be running).
Every ingest removes retired files past the grace period too; run this daily for the rest.`,
  async run(args: string[], ctx: CliContext) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        'dry-run': { type: 'boolean' },
        grace: { type: 'string' },
        'ingest-grace': { type: 'string' },
        json: { type: 'boolean' },
      },
      true,
    );
    if (positionals.length !== 1 || positionals[0] !== 'gc') throw new UsageError('expected gc');
    // Checked before the stores are opened, as every argument is.
    const retiredGraceMs = minutes('grace', values.grace, RETIRED_GRACE_MS);
    const ingestGraceMs = minutes('ingest-grace', values['ingest-grace'], INGEST_GRACE_MS);
    const { storage, catalogue, clock } = await ctx.surveyWriter();
    const options = { now: clock(), dryRun: values['dry-run'] ?? false, retiredGraceMs, ingestGraceMs };
    const report = await collectGarbage(storage, catalogue, options);
    if (values.json) printJson(ctx, { storage: storage.description, dryRun: options.dryRun, ...report });
    else {
      const verb = options.dryRun ? 'would delete' : 'deleted';
      ctx.stdout.write(
        `${storage.description}: ${verb} ${report.deleted.length} file(s), kept ${report.waiting.length} for now\n`,
      );
    }
    return 0;
  },
};
