/**
 * `npm run bench`: every benchmark part in one run on loopback (tiles, coverage, raster, scale,
 * storage), each starting and stopping its own servers, then the results as JSON
 * (bench/results/<date>.json, committed) and as a report with charts (docs/benchmarks.md,
 * docs/benchmarks/*.png).
 *
 *   node --import tsx bench/run.ts [--only tiles|pass-through|cold|coverage|raster|scale|scale-documents|storage|change|cli|metrics] [--quick] [--fresh] [--profile] [--no-write]
 *     [--nadir-workers N|auto]  (the tile part's server: NADIR_WORKERS; serve's default otherwise)
 *     [--tile-rounds N] [--tile-seconds S]  (the tile part's rounds and seconds per point: 3 and 7)
 *     [--scale-sizes 1000000,10000000]  (the scale part's catalogue sizes: 100k quick, 1M and 10M full)
 *     [--cold-before <checkout>]  (the cold part also measures that built checkout's nadir, as "before")
 *   node --import tsx bench/run.ts --render bench/results/<date>.json
 *
 * --only runs one part and carries the others over from the latest results file, so the report stays
 * whole. --quick: short development runs, marked as such in the report, their results file kept out of
 * the repository (bench/work/results-quick.json).
 * --render measures nothing: it rewrites the report and charts from a results file (the tile section
 * rebuilt from its raw figures, so a change to how it is reported needs no new run).
 * Expects a current dist/ (scripts/setup.sh builds it; or `npm run build`).
 *
 * Layout: one folder per part (tiles/, pass-through/, coverage/, raster/, scale/, storage/, change/; the cold part lives in tiles/cold-*.ts), each with run.ts (measures, returns the
 * raw figures), raw.ts (their types, imported by run and report alike, so no import cycle;
 * test/composition/import-cycles.test.ts checks) and report.ts (raw figures -> Section: goals,
 * tables, charts, words); main.ts runs a part alone with its own settings. PARTS below lists them.
 * Shared: load/ (starting and stopping processes: nadir serve, nginx, wrk, CPU profiles, the
 * compiled modules), report/ (the Section and Part types, markdown, charts), contenders/ (the peers
 * nadir is measured against).
 *
 * Import policy: what is measured runs compiled (dist/), as deployed. Every nadir server is
 * `bin/nadir serve` (dist/cli/bin.js), started only by load/nadir-serve.ts; code a part times in
 * its own process (the coverage floors, the tile encoders, the raster engine) is loaded from dist/
 * by load/compiled.ts and typed with `import type` from src/. Value imports of src/ (run by tsx)
 * are for what is not timed: geometry, building data and keys through the composition root.
 * Nothing imports dist/ statically, so type checking needs no build.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { changeSection } from './change/report.js';
import { measureChange } from './change/run.js';
import { startSection } from './cli/report.js';
import { measureStart } from './cli/run.js';
import { coverageSection } from './coverage/report.js';
import { measureCoverage } from './coverage/run.js';
import { startedGroups } from './load/processes.js';
import { metricsSection } from './metrics/report.js';
import { measureMetrics } from './metrics/run.js';
import { passThroughSection } from './pass-through/report.js';
import { measurePassThrough } from './pass-through/run.js';
import { rasterSection } from './raster/report.js';
import { measureRaster } from './raster/run.js';
import { writeCharts } from './report/charts.js';
import { renderReport } from './report/markdown.js';
import type { Part, Section, SectionOptions } from './report/section.js';
import { documentsSection } from './scale/documents-report.js';
import { measureDocuments } from './scale/documents-run.js';
import { scaleSection } from './scale/report.js';
import { measureScale } from './scale/run.js';
import { storageSection } from './storage/report.js';
import { measureStorage } from './storage/run.js';
import { coldSection } from './tiles/cold-report.js';
import { measureCold } from './tiles/cold-run.js';
import { tilesSection, writeTilesPage } from './tiles/report.js';
import { measureTiles } from './tiles/run.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const RESULTS = join(ROOT, 'bench/results');
const DOC = join(ROOT, 'docs/benchmarks.md');
const CHARTS = join(ROOT, 'docs/benchmarks');

interface Results {
  date: string;
  command: string;
  quick: boolean;
  seconds: number;
  /** Each section with the date of the run that measured it (carried-over sections keep theirs). */
  sections: { date: string; section: Section }[];
}

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    render: { type: 'string' },
    'nadir-workers': { type: 'string' },
    'tile-rounds': { type: 'string' },
    'tile-seconds': { type: 'string' },
    'scale-sizes': { type: 'string' },
    'cold-before': { type: 'string' },
  },
});

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

/** Every part, in report order: bench/<id>/run.ts measures, raw.ts types its figures, report.ts words them. */
const PARTS: Part<unknown>[] = [
  {
    id: 'tiles',
    run: (options) =>
      measureTiles(options, {
        profile: values.profile,
        nadirWorkers: values['nadir-workers'],
        rounds: values['tile-rounds'] ? Number(values['tile-rounds']) : undefined,
        seconds: values['tile-seconds'] ? Number(values['tile-seconds']) : undefined,
      }),
    report: tilesSection,
  },
  { id: 'pass-through', run: (options) => measurePassThrough(options), report: passThroughSection },
  {
    id: 'cold',
    run: (options) => measureCold(options, { baseRoot: values['cold-before'] }),
    report: coldSection,
  },
  { id: 'coverage', run: measureCoverage, report: coverageSection },
  { id: 'raster', run: measureRaster, report: rasterSection },
  {
    id: 'scale',
    run: (options) => measureScale(options, { sizes: values['scale-sizes']?.split(',').map(Number) }),
    report: scaleSection,
  },
  { id: 'scale-documents', run: measureDocuments, report: documentsSection },
  { id: 'storage', run: measureStorage, report: storageSection },
  { id: 'change', run: measureChange, report: changeSection },
  { id: 'cli', run: measureStart, report: startSection },
  { id: 'metrics', run: measureMetrics, report: metricsSection },
];
const PART_IDS = PARTS.map((part) => part.id);

/** The newest full (not quick) results file, for the sections this run does not measure. */
async function latestResults(): Promise<Results | undefined> {
  const files = (await readdir(RESULTS).catch(() => [] as string[]))
    .filter((f) => /^\d{4}-\d{2}-\d{2}\.json$/.test(f))
    .sort();
  const last = files.at(-1);
  return last ? (JSON.parse(await readFile(join(RESULTS, last), 'utf8')) as Results) : undefined;
}

async function leftovers(): Promise<string> {
  const groups = startedGroups();
  if (groups.length === 0) return '';
  const { stdout } = await run('pgrep', ['-a', '-g', groups.join(',')]).catch(() => ({ stdout: '' }));
  return stdout.trim();
}

async function writeReport(results: Results, resultsFile: string): Promise<void> {
  await mkdir(CHARTS, { recursive: true });
  for (const { section } of results.sections) await writeCharts(section.charts, CHARTS);
  await writeFile(DOC, renderReport(results.sections, { ...results, resultsFile }));
  log(`wrote docs/benchmarks.md and ${results.sections.flatMap((s) => s.section.charts).length} charts`);
}

async function render(file: string): Promise<number> {
  const results = JSON.parse(await readFile(file, 'utf8')) as Results;
  for (const entry of results.sections) {
    const part = PARTS.find((p) => p.id === entry.section.id);
    if (part) entry.section = part.report(entry.section.raw);
    // The tile page and the results file carry the same words as the report; a tiles section
    // carried over from an earlier day keeps the page that names the command that measured it.
    if (entry.section.id === 'tiles' && entry.date === results.date) {
      await writeTilesPage(entry.section, results.command, results.quick);
    }
  }
  await writeFile(file, `${JSON.stringify(results, null, 1)}\n`);
  await writeReport(results, file.replace(`${ROOT}/`, ''));
  return 0;
}

async function main(): Promise<number> {
  if (values.render) return render(values.render);
  const only = values.only;
  if (only !== undefined && !PART_IDS.includes(only)) throw new Error(`--only must be one of ${PART_IDS.join(', ')}`);
  if (!existsSync(join(ROOT, 'dist/cli/bin.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  const started = Date.now();
  const date = new Date().toISOString().slice(0, 10);
  const options: SectionOptions = { quick: values.quick, fresh: values.fresh, log };
  const measured: { date: string; section: Section }[] = [];
  const problems: string[] = [];
  for (const part of PARTS.filter((p) => only === undefined || p.id === only)) {
    const id = part.id;
    log(`${id}: starting`);
    try {
      const result = part.report(await part.run(options));
      measured.push({ date, section: result });
      problems.push(...(result.failures ?? []).map((f) => `${id}: ${f}`));
      log(`${id}: done`);
    } catch (error) {
      problems.push(`${id}: ${(error as Error).stack ?? error}`);
      log(`${id}: FAILED: ${(error as Error).stack ?? error}`);
    }
  }

  const carried = ((await latestResults())?.sections ?? []).filter(
    (s) => !measured.some((m) => m.section.id === s.section.id),
  );
  const sections = [...measured, ...carried].sort(
    (a, b) => PART_IDS.indexOf(a.section.id) - PART_IDS.indexOf(b.section.id),
  );
  const command = ['node --import tsx bench/run.ts', ...process.argv.slice(2)].join(' ');
  const results: Results = { date, command, quick: values.quick, seconds: (Date.now() - started) / 1000, sections };
  if (!values['no-write'] && measured.length > 0) {
    const resultsFile = values.quick ? 'bench/work/results-quick.json' : `bench/results/${date}.json`;
    await mkdir(join(ROOT, resultsFile, '..'), { recursive: true });
    await writeFile(join(ROOT, resultsFile), `${JSON.stringify(results, null, 1)}\n`);
    log(`wrote ${resultsFile}`);
    await writeReport(results, resultsFile);
    const tiles = measured.find((m) => m.section.id === 'tiles');
    if (tiles) await writeTilesPage(tiles.section, command, values.quick);
  }

  const left = await leftovers();
  if (left) problems.push(`processes left running:\n${left}`);
  else log(`all ${startedGroups().length} process groups started were stopped`);
  log(`${((Date.now() - started) / 60_000).toFixed(1)} min`);
  for (const problem of problems) log(`PROBLEM: ${problem}`);
  return problems.length > 0 ? 1 : 0;
}

process.exitCode = await main();
