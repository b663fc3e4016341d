/**
 * The pass-through benchmark on its own; bench/run.ts runs it with the other parts for the report.
 *   node --import tsx bench/pass-through/main.ts [--quick] [--rounds N] [--seconds S]
 */
import { parseArgs } from 'node:util';
import { passThroughSection } from './report.js';
import { measurePassThrough, passThroughSettings } from './run.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
  },
});
const quick = values.quick ?? false;
const settings = passThroughSettings(quick);
if (values.rounds) settings.rounds = Number(values.rounds);
if (values.seconds) settings.seconds = Number(values.seconds);
const raw = await measurePassThrough(
  { quick, fresh: false, log: (line) => process.stderr.write(`${line}\n`) },
  settings,
);
const section = passThroughSection(raw);
for (const g of section.goals)
  process.stdout.write(`${g.met ? 'met' : 'MISSED'}: ${g.text}: ${g.measured?.toFixed(2)} (goal ${g.target})\n`);
for (const row of section.tables[0]?.rows ?? []) process.stdout.write(`${row.join(' | ')}\n`);
