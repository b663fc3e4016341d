import { parseBBox } from '../../area.js';
import { dateFilterParameters, oneOf, tagFilterParameters, tileType } from '../../query.js';
import { parseZoomRange } from '../../tile-grid.js';
import { exportTiles } from '../tile-export.js';
import { asUsage, CliUsageError, DATE_OPTIONS, dateFilters, serverCommandLine, subcommandArgs } from './arguments.js';
import { type Command, CommandProgress, clientFor, printJson } from './context.js';

const tagList = (text: string | undefined) =>
  text === undefined ? undefined : text.split(',').map((tag) => tag.trim());

export const tilesCommand: Command = {
  name: 'tiles',
  summary: 'tiles export: writes the tiles of a box and zooms to an MBTiles or PMTiles file (resumable)',
  usage:
    'nadir-client tiles export --bbox W,S,E,N --zoom 18-20 --out FILE.mbtiles|FILE.pmtiles [--type Vert|North|South|East|West] [--format png|jpg] [--survey ID] [--since D] [--until D] [--include TAGS] [--exclude TAGS] [--progress] [--json]',
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
    const progress = new CommandProgress(context, values.progress);
    const client = clientFor(settings, context, { onRetryWait: progress.onRetryWait });
    let shown = 0;
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
    const result = await exportTiles(client, {
      bbox,
      minZoom: zoom.min,
      maxZoom: zoom.max,
      type,
      format,
      out,
      concurrency,
      signal: context.signal,
      ...(values.survey === undefined ? {} : { surveyId: values.survey }),
      ...dateFilters(values),
      ...(include === undefined ? {} : { include }),
      ...(exclude === undefined ? {} : { exclude }),
      onProgress: (done, total) => {
        if (!progress.shown) return;
        if (!progress.board) progress.start(total, 'tiles');
        progress.board?.tick(done - shown);
        shown = done;
      },
    }).finally(() => progress.board?.end());
    if (values.json) printJson(context, result);
    else
      context.stdout.write(
        `${result.out}: ${result.written} tiles with imagery of ${result.total} (${result.fetched} fetched now)\n`,
      );
    return 0;
  },
};
