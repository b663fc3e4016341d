import { parseBBox } from '../../area.js';
import { type StacItem, stacSearchParameters } from '../../stac.js';
import { asUsage, serverCommandLine, subcommandArgs } from './arguments.js';
import { type Command, clientFor, printJson } from './context.js';

/** The item's products: its data assets and tile layers, each named once. */
function products(item: StacItem): string {
  return [...new Set(Object.keys(item.assets).map((key) => key.replace(/_tiles$/, '')))].join(',');
}

export const stacCommand: Command = {
  name: 'stac',
  summary: "stac search: the catalogue's surveys meeting a box and a time, newest first, every page",
  usage: 'nadir-client stac search --bbox W,S,E,N [--datetime START/END] [--ids ID,...] [--limit N] [--json]',
  async run(args, context) {
    const { values, settings } = serverCommandLine(
      subcommandArgs('stac', 'search', args),
      { bbox: { type: 'string' }, datetime: { type: 'string' }, ids: { type: 'string' }, limit: { type: 'string' } },
      context.env,
    );
    // Checked here, so a mistake exits 2 like every command-line mistake, before any request.
    const options = asUsage(() => {
      const box = values.bbox === undefined ? undefined : parseBBox(values.bbox);
      const limit = values.limit === undefined ? 100 : Number(values.limit);
      const checked = {
        ...(box ? { bbox: [box.west, box.south, box.east, box.north] as [number, number, number, number] } : {}),
        ...(values.datetime === undefined ? {} : { datetime: values.datetime }),
        ...(values.ids === undefined ? {} : { ids: values.ids.split(',').map((id) => id.trim()) }),
        limit,
      };
      stacSearchParameters(checked);
      return { ...checked, signal: context.signal };
    });
    const client = clientFor(settings, context);
    const items: StacItem[] = [];
    for await (const item of client.stacSearch(options)) items.push(item);
    if (values.json) {
      printJson(context, { type: 'FeatureCollection', numberMatched: items.length, features: items });
      return 0;
    }
    if (items.length === 0) context.stdout.write('no survey matches\n');
    for (const item of items) {
      const p = item.properties;
      const tags = p['nadir:tags']?.length ? `  [${p['nadir:tags'].join(', ')}]` : '';
      const gsd = p.gsd === undefined ? '' : `  ${p.gsd} m`;
      context.stdout.write(
        `${p['nadir:capture_date'] ?? p.datetime ?? '?'}  ${item.id}  ${products(item)}${gsd}${tags}\n`,
      );
    }
    return 0;
  },
};
