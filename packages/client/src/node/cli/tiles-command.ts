import { parseBBox } from '../../area.js';
import { dateFilterParameters, oneOf, tagFilterParameters, tileType } from '../../query.js';
import { parseZoomRange } from '../../tile-grid.js';
import { DEFAULT_PACE_SHARE } from '../../tile-pacer.js';
import { exportTiles, type TileExportPlan, type TileExportResult } from '../tile-export.js';
import { asUsage, CliUsageError, DATE_OPTIONS, dateFilters, serverCommandLine, subcommandArgs } from './arguments.js';
import { type CliContext, type Command, CommandProgress, clientFor, printJson } from './context.js';
import { formatBytes, formatDuration } from './progress-board.js';

const tagList = (text: string | undefined) =>
  text === undefined ? undefined : text.split(',').map((tag) => tag.trim());

/** Past this many tiles still to fetch, an export starts only with --yes: a city at z21 is millions. */
export const CONFIRM_TILES = 10_000;

const count = (n: number) => n.toLocaleString('en-US');

/** The plan as one line: what will be fetched, and about how big and how long. */
function planLine(plan: TileExportPlan): string {
  const resumed = plan.alreadyFetched > 0 ? ` (${count(plan.alreadyFetched)} already in the file)` : '';
  // Tiles without imagery weigh nothing, and how many there are is known only at the end.
  const size = plan.estimatedBytes === undefined ? 'size unknown' : `up to ${formatBytes(plan.estimatedBytes)}`;
  const time = plan.estimatedSeconds === undefined ? 'time unknown' : `about ${formatDuration(plan.estimatedSeconds)}`;
  const rate = plan.tilesPerSecond;
  const pace = rate === undefined ? '' : ` at about ${rate.toFixed(rate < 10 ? 1 : 0)} tiles/s`;
  const share = Math.round(DEFAULT_PACE_SHARE * 100);
  const limit =
    plan.rateLimit === undefined
      ? ''
      : ` (paced to ${share}% of the key's rate limit of ${count(plan.rateLimit)} a window)`;
  return `${plan.out}: ${count(plan.pending)} of ${count(plan.total)} tiles to fetch${resumed}, ${size}, ${time}${pace}${limit}`;
}

function summaryLine(result: TileExportResult): string {
  const rate = result.seconds > 0 ? `, ${(result.fetched / result.seconds).toFixed(1)} tiles/s` : '';
  return (
    `${result.out}: ${count(result.written)} tiles with imagery of ${count(result.total)} ` +
    `(${count(result.withoutImagery)} without), ${formatBytes(result.bytes)}; ` +
    `${count(result.fetched)} fetched now in ${formatDuration(result.seconds)}${rate}\n`
  );
}

export const tilesCommand: Command = {
  name: 'tiles',
  summary: 'tiles export: writes the tiles of a box and zooms to an MBTiles or PMTiles file (resumable)',
  usage:
    'nadir-client tiles export --bbox W,S,E,N --zoom 18-20 --out FILE.mbtiles|FILE.pmtiles [--type Vert|North|South|East|West] [--format png|jpg] [--survey ID] [--since D] [--until D] [--include TAGS] [--exclude TAGS] [--concurrency N] [--yes] [--quiet] [--json]\n\n' +
    `Prints the tile count, size and time before it starts; past ${count(CONFIRM_TILES)} tiles it starts only with --yes.\n` +
    'Progress goes to stderr (a line per 10% and each minute when not a terminal; --quiet: none), the summary to stdout.',
  async run(args, context) {
    const { values, settings } = serverCommandLine(
      subcommandArgs('tiles', 'export', args),
      {
        bbox: { type: 'string' },
        zoom: { type: 'string' },
        out: { type: 'string' },
        type: { type: 'string' },
        format: { type: 'string' },
        survey: { type: 'string' },
        ...DATE_OPTIONS,
        include: { type: 'string' },
        exclude: { type: 'string' },
        concurrency: { type: 'string' },
        yes: { type: 'boolean' },
        quiet: { type: 'boolean' },
        // Kept for scripts written before progress was shown by default.
        progress: { type: 'boolean' },
      },
      context.env,
    );
    if (!values.bbox || !values.zoom || !values.out) throw new CliUsageError('--bbox, --zoom and --out are required');
    const out = values.out;
    if (!/\.(mbtiles|pmtiles)$/.test(out))
      throw new CliUsageError(`--out must end in .mbtiles or .pmtiles, got ${out}`);
    const bbox = asUsage(() => parseBBox(values.bbox as string));
    const zoom = asUsage(() => parseZoomRange(values.zoom as string));
    const type = asUsage(() => tileType(values.type ?? 'Vert', '--type'));
    const format = asUsage(() => oneOf('--format', values.format ?? 'png', ['png', 'jpg'] as const));
    const concurrency = values.concurrency === undefined ? 4 : Number(values.concurrency);
    if (!(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= 16))
      throw new CliUsageError('--concurrency must be 1..16');
    const include = tagList(values.include);
    const exclude = tagList(values.exclude);
    // Filters are checked here, so a mistake in them is a usage error (2), not a failed export.
    asUsage(() => {
      const params = new URLSearchParams();
      dateFilterParameters({ since: values.since, until: values.until }, params);
      tagFilterParameters({ include, exclude }, params);
    });
    if (values.survey !== undefined && !/^[A-Za-z0-9._~-]{1,128}$/.test(values.survey)) {
      throw new CliUsageError(`--survey must be a survey id, got ${JSON.stringify(values.survey)}`);
    }
    // An export runs for minutes or hours: its progress shows wherever stderr goes, unless --quiet.
    const progress = new CommandProgress(context, values.quiet !== true, values.quiet === true);
    const client = clientFor(settings, context, { onRetryWait: progress.onRetryWait });
    let shown = 0;
    let refused: TileExportPlan | undefined;
    const result = await exportTiles(client, {
      bbox,
      minZoom: zoom.min,
      maxZoom: zoom.max,
      type,
      format,
      out,
      concurrency,
      signal: context.signal,
      clock: context.clock,
      sleep: context.sleep,
      ...(values.survey === undefined ? {} : { surveyId: values.survey }),
      ...dateFilters(values),
      ...(include === undefined ? {} : { include }),
      ...(exclude === undefined ? {} : { exclude }),
      onPlan: (plan) => {
        context.stderr.write(`${planLine(plan)}\n`);
        if (plan.pending > CONFIRM_TILES && values.yes !== true) refused = plan;
        return refused === undefined;
      },
      onWait: (ms) =>
        progress.board?.note(`waiting ${(ms / 1000).toFixed(1)} s (the export's share of the rate limit is used)`, ms),
      onProgress: (done, total) => {
        if (!progress.shown) return;
        if (!progress.board) progress.start(total, 'tiles');
        progress.board?.tick(done - shown);
        shown = done;
      },
    }).finally(() => progress.board?.end());
    return report(context, result, refused, values.json === true);
  },
};

function report(
  context: CliContext,
  result: TileExportResult,
  refused: TileExportPlan | undefined,
  json: boolean,
): number {
  if (refused) {
    context.stderr.write(
      `nadir-client tiles: ${count(refused.pending)} tiles is over ${count(CONFIRM_TILES)}: add --yes to start the export ` +
        '(or a smaller --bbox or fewer --zoom levels)\n',
    );
    return 2;
  }
  if (json) printJson(context, result);
  else context.stdout.write(summaryLine(result));
  // 0 only when something is there: a box and zooms without any imagery is not a map.
  if (result.written === 0) {
    context.stderr.write('nadir-client tiles: no imagery in this box and these zooms (with these filters)\n');
    return 1;
  }
  return 0;
}
