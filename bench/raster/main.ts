/**
 * Raster benchmark on its own (`npm run bench:raster`); bench/run.ts calls runRasterSection for the
 * full report. Writes docs/benchmarks-raster.md and its charts under docs/benchmarks/.
 *
 *   node --import tsx bench/raster.ts [--quick] [--fresh] [--sizes 500,1000,2000,5000] [--formats tif,jpg]
 *     [--rounds N] [--concurrency|--no-concurrency] [--no-write]
 *
 * --fresh rebuilds the survey in bench/work/raster. No network; every process it starts is stopped.
 */
import { parseArgs } from 'node:util';
import { writeSectionPage } from '../report/page.js';
import type { Format } from './raw.js';
import { runRasterSection } from './run.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
    sizes: { type: 'string' },
    formats: { type: 'string' },
    rounds: { type: 'string' },
    concurrency: { type: 'boolean' },
    'no-concurrency': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
  },
});

const section = await runRasterSection(
  { quick: values.quick, fresh: values.fresh, log: (line) => process.stderr.write(`${line}\n`) },
  {
    sizes: values.sizes?.split(',').map(Number),
    formats: values.formats?.split(',') as Format[] | undefined,
    rounds: values.rounds === undefined ? undefined : Number(values.rounds),
    concurrency: values['no-concurrency'] ? false : values.concurrency,
  },
);
await writeSectionPage(section, {
  heading: 'Raster download benchmark',
  command: 'npm run bench:raster',
  quick: values.quick,
  print: values['no-write'],
});
