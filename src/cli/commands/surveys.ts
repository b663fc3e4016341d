import { NadirError } from '../../errors.js';
import { type CliContext, type Command, parseCommandArgs, printJson, UsageError } from '../command.js';
import { surveySummary, surveyText } from '../survey-summary.js';

const WORLD = { minX: -180, minY: -90, maxX: 180, maxY: 90 };

export const surveysCommand: Command = {
  name: 'surveys',
  summary: 'List, show or delete surveys in the catalogue',
  usage: `nadir surveys list [--json]
nadir surveys show <id> [--json]   (--json: the catalogue's whole record)
nadir surveys delete <id>`,
  async run(args: string[], ctx: CliContext) {
    const { values, positionals } = parseCommandArgs(args, { json: { type: 'boolean' } });
    const [action, id] = positionals;
    // Checked before the catalogue is opened; extra arguments are a mistake, not ignored.
    const wellFormed = action === 'list' ? positionals.length === 1 : positionals.length === 2 && !!id;
    if (!wellFormed || (action !== 'list' && action !== 'show' && action !== 'delete')) {
      throw new UsageError('expected list, show <id> or delete <id>');
    }
    const { catalogue } = await ctx.stores();
    if (action === 'list') {
      const { surveys, total } = await catalogue.search({ area: WORLD, limit: Number.MAX_SAFE_INTEGER, offset: 0 });
      if (values.json) printJson(ctx, { total, surveys: surveys.map(surveySummary) });
      else {
        for (const s of surveys) {
          ctx.stdout.write(
            `${s.id}  ${s.captureDate}  v${s.version}  ${Object.keys(s.assets).join(',')}  ${s.tags.join(',')}\n`,
          );
        }
        ctx.stdout.write(`${total} survey(s)\n`);
      }
      return 0;
    }
    if (action === 'show') {
      const survey = await catalogue.get(id as string);
      if (!survey) throw new NadirError('SURVEY_NOT_FOUND', `no survey ${id}`);
      if (values.json) printJson(ctx, survey);
      else ctx.stdout.write(surveyText(survey));
      return 0;
    }
    const { ingestor } = await ctx.surveyWriter();
    if (!(await ingestor.delete(id as string))) throw new NadirError('SURVEY_NOT_FOUND', `no survey ${id}`);
    ctx.stdout.write(`deleted survey ${id} (its files go after a grace period: nadir storage gc)\n`);
    return 0;
  },
};
