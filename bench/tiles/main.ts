/**
 * Tile benchmark on its own, with the part's own settings; bench/run.ts runs it with the other parts
 * for the full report. Writes docs/benchmarks-tiles.md and its charts under docs/benchmarks/ (or,
 * with --no-write, prints the page).
 *
 *   node --import tsx bench/tiles/main.ts [--quick] [--fresh] [--profile] [--rounds N] [--seconds S]
 *     [--connections 1,8,64,256] [--nadir-workers N|auto] [--no-write]
 */
import { parseArgs } from 'node:util';
import { tilesSection, writeTilesPage } from './report.js';
import { measureTiles } from './run.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    connections: { type: 'string' },
    'nadir-workers': { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
});
const raw = await measureTiles(
  { quick: values.quick, fresh: values.fresh, log: (line) => process.stderr.write(`${line}\n`) },
  {
    profile: values.profile,
    rounds: values.rounds ? Number(values.rounds) : undefined,
    seconds: values.seconds ? Number(values.seconds) : undefined,
    connections: values.connections?.split(',').map(Number),
    nadirWorkers: values['nadir-workers'],
  },
);
const command = ['node --import tsx bench/tiles/main.ts', ...process.argv.slice(2)].join(' ');
await writeTilesPage(tilesSection(raw), command, values.quick, values['no-write']);
