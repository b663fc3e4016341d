/**
 * Coverage benchmark on its own (`npm run bench:coverage`), with the part's own settings; bench/run.ts
 * runs it with the other parts for the full report. Writes docs/benchmarks-coverage.md and its charts under docs/benchmarks/.
 *
 *   node --import tsx bench/coverage/main.ts [--quick] [--fresh] [--sizes 1000,10000,100000,1000000]
 *     [--rounds N] [--seconds S] [--connections C] [--workers 1,auto] [--profile|--no-profile] [--no-write]
 *
 * Bounded: wrk runs have deadlines; servers and scratch files go when the run ends, however it ends.
 */
import { parseArgs } from 'node:util';
import { writeSectionPage } from '../report/page.js';
import { coverageSection } from './report.js';
import { measureCoverage } from './run.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
    sizes: { type: 'string' },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    connections: { type: 'string' },
    workers: { type: 'string' },
    profile: { type: 'boolean' },
    'no-profile': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
  },
});
const number = (text: string | undefined) => (text === undefined ? undefined : Number(text));

const raw = await measureCoverage(
  { quick: values.quick, fresh: values.fresh, log: (line) => process.stderr.write(`${line}\n`) },
  {
    sizes: values.sizes?.split(',').map(Number),
    rounds: number(values.rounds),
    seconds: number(values.seconds),
    connections: number(values.connections),
    workers: values.workers?.split(','),
    profile: values['no-profile'] ? false : values.profile,
  },
);
await writeSectionPage(coverageSection(raw), {
  heading: 'Coverage benchmark',
  command: 'npm run bench:coverage',
  quick: values.quick,
  print: values['no-write'],
});
