/** The command start-up figures as a report Section. */
import { formatNumber } from '../report/markdown.js';
import { goal, type Section } from '../report/section.js';
import { spread } from '../report/spread.js';
import { START_CONTENDERS, type StartContender, type StartRaw } from './raw.js';

const GOAL_MS = 500;

const NAMES: Record<StartContender, string> = {
  bareNode: 'bare node (`node -e 0`): the floor',
  version: '`nadir --version`',
  accountsList: '`nadir accounts list --json`',
  surveysList: '`nadir surveys list --json`',
  migrate: '`nadir migrate --json`',
  allModules: "node loading what `nadir serve` loads (composition root + HTTP server): every command's start before",
};

function shown(values: number[]): string {
  const s = spread(values);
  return `${formatNumber(s.median)} (${formatNumber(s.low)}-${formatNumber(s.high)})`;
}

export function startSection(raw: StartRaw): Section {
  const wall = (who: StartContender) => raw.samples[who].map((s) => s.ms);
  const accounts = spread(wall('accountsList'));
  const overFloor = (who: StartContender) =>
    raw.samples[who].map((s, i) => s.ms - (raw.samples.bareNode[i]?.ms ?? Number.NaN));
  const load = (values: number[]) => values.map((v) => v.toFixed(2)).join(' / ');
  return {
    id: 'cli',
    title: 'Commands: how long a `nadir` command takes to start and answer',
    conditions: [
      `The compiled CLI (bin/nadir) on the embedded default (SQLite, local files): ${raw.rows.accounts} accounts, ${raw.rows.surveys} surveys. ${raw.rounds} rounds, every contender once per round in a rotated order, after one run of each thrown away. Wall time from spawn to exit; CPU is the process's user + system time (/usr/bin/time).`,
      `Machine: ${raw.machine.cpus} CPUs (${raw.machine.model}), shared with other work: load average (1/5/15 min) ${load(raw.machine.loadStart)} at the start, ${load(raw.machine.loadEnd)} at the end.`,
    ],
    goals: [goal('`nadir accounts list --json`, start to exit', accounts.median, GOAL_MS, 'ms', 'max')],
    tables: [
      {
        caption: 'Milliseconds from start to exit (median, min-max), above bare node in the same round, and CPU',
        columns: ['command', 'ms', 'ms above bare node', 'CPU ms'],
        rows: START_CONTENDERS.map((who) => [
          NAMES[who],
          shown(wall(who)),
          who === 'bareNode' ? '-' : shown(overFloor(who)),
          shown(raw.samples[who].map((s) => s.cpuMs)),
        ]),
        notes: [
          'CPU is counted by the kernel in 10 ms ticks: single runs read 0, 10 or 20 ms more or less than they took; the medians over the rounds are the figure to read.',
        ],
      },
    ],
    charts: [],
    findings: [
      "Each command's module is loaded when it runs, and each opens only what it uses (src/cli/main.ts): an accounts or surveys listing opens the database and nothing else, `migrate` the same; `ingest`, `worker`, `demo` and `storage` add the survey files and the ingestor (GDAL); only `serve` builds the whole composition root (Redis, the tile, raster and coverage cores, fastify). The last row is what every command loaded before it started any work.",
    ],
    raw,
  };
}
