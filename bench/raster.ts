/**
 * Raster benchmark on its own (`npm run bench:raster`); bench/run.ts calls runRasterSection for the
 * full report. Writes docs/benchmarks-raster.md and its charts under docs/benchmarks/.
 *
 *   node --import tsx bench/raster.ts [--quick] [--fresh] [--sizes 500,1000,2000,5000] [--formats tif,jpg]
 *     [--rounds N] [--concurrency|--no-concurrency] [--no-write]
 *
 * --fresh rebuilds the survey in bench/work/raster. No network; every process it starts is stopped.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Format, runRasterSection } from './raster-section.js';
import { writeCharts } from './report/charts.js';
import { renderSection } from './report/markdown.js';

const ROOT = join(import.meta.dirname, '..');
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
const markdown = `${renderSection(section, 'benchmarks', 1).replace(/^# Rasters/, '# Raster download benchmark')}

Written by \`npm run bench:raster\` (bench/raster.ts) on ${new Date().toISOString().slice(0, 10)}; \`npm run bench\`
puts the same section in docs/benchmarks.md with the other parts.
`;
if (values['no-write']) {
  process.stdout.write(markdown);
} else {
  const charts = join(ROOT, 'docs/benchmarks');
  await mkdir(charts, { recursive: true });
  await writeCharts(section.charts, charts);
  await writeFile(join(ROOT, 'docs/benchmarks-raster.md'), markdown);
  process.stderr.write('raster: wrote docs/benchmarks-raster.md and its charts in docs/benchmarks/\n');
}
