/**
 * Raster benchmark on its own (`npm run bench:raster`), with the part's own settings; bench/run.ts runs
 * it with the other parts for the full report. Writes docs/benchmarks-raster.md and its charts under docs/benchmarks/.
 *
 *   node --import tsx bench/raster/main.ts [--quick] [--fresh] [--sizes 500,1000,2000,5000] [--formats tif,jpg]
 *     [--rounds N] [--concurrency|--no-concurrency] [--no-write]
 *
 * --fresh rebuilds the survey in bench/work/raster. No network; every process it starts is stopped.
 */
import { parseArgs } from 'node:util';
import { writeSectionPage } from '../report/page.js';
import type { Format } from './raw.js';
import { rasterSection } from './report.js';
import { measureRaster } from './run.js';

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

const raw = await measureRaster(
  { quick: values.quick, fresh: values.fresh, log: (line) => process.stderr.write(`${line}\n`) },
  {
    sizes: values.sizes?.split(',').map(Number),
    formats: values.formats?.split(',') as Format[] | undefined,
    rounds: values.rounds === undefined ? undefined : Number(values.rounds),
    concurrency: values['no-concurrency'] ? false : values.concurrency,
  },
);
await writeSectionPage(rasterSection(raw), {
  heading: 'Raster download benchmark',
  command: 'npm run bench:raster',
  quick: values.quick,
  print: values['no-write'],
});
