/**
 * The cold tile benchmark on its own (bench/run.ts runs it as the `cold` part, with the others):
 *
 *   node --import tsx bench/tiles/cold-main.ts [--quick] [--fresh] [--rounds N] [--seconds S]
 *     [--connections 8,64] [--formats jpg,png] [--only nadir,nadir-0,mapserver,rasterio]
 *     [--before <checkout>] [--no-profile]
 *
 * --before runs another built checkout's nadir (tile cache 0) beside this one, for before/after
 * figures measured in the same rounds. Prints the section as Markdown; writes nothing.
 */
import { parseArgs } from 'node:util';
import { renderSection } from '../report/markdown.js';
import { coldSection } from './cold-report.js';
import { measureCold } from './cold-run.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    connections: { type: 'string' },
    formats: { type: 'string' },
    only: { type: 'string' },
    before: { type: 'string' },
    'no-profile': { type: 'boolean', default: false },
  },
});
const raw = await measureCold(
  { quick: values.quick, fresh: values.fresh, log: (line) => process.stderr.write(`${line}\n`) },
  {
    rounds: values.rounds ? Number(values.rounds) : undefined,
    seconds: values.seconds ? Number(values.seconds) : undefined,
    connections: values.connections?.split(',').map(Number),
    formats: values.formats?.split(',') as ('jpg' | 'png')[] | undefined,
    only: values.only?.split(','),
    baseRoot: values.before,
    profile: values['no-profile'] ? false : undefined,
  },
);
process.stdout.write(`${renderSection(coldSection(raw), 'benchmarks')}\n`);
process.stdout.write(`${JSON.stringify(raw)}\n`);
