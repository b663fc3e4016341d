// The contract between a benchmark part and the report writer (bench/run.ts). Each part
// (tiles, coverage, raster) reports one Section; run.ts writes every Section's raw figures to
// bench/results/<date>.json and renders its conditions, goals, tables and charts into
// docs/benchmarks.md. Keep this stable: other parts import it.

/** Options every part accepts from bench/run.ts. */
export interface SectionOptions {
  /** Short development runs: fewer points, seconds per point, one round. */
  quick: boolean;
  /** Rebuild generated data under bench/work/ instead of reusing it. */
  fresh: boolean;
  /** Progress lines go here (stderr by default), never into the report. */
  log: (line: string) => void;
}

/**
 * One benchmark part as bench/run.ts lists it: `run` measures and returns the raw figures (kept in
 * the results file), `report` turns raw figures into the Section, so a results file can be
 * re-reported (--render) without measuring again. Methods, so a Part<CoverageRaw> fits the table.
 */
export interface Part<Raw> {
  id: string;
  run(options: SectionOptions): Promise<Raw>;
  report(raw: Raw): Section;
}

export type Cell = string | number | null;

export interface Table {
  caption: string;
  columns: string[];
  /** Numbers are formatted by the writer (markdown.ts formatNumber: 1,234 / 12.3 / 1.23 / 0.12); null prints as '-'. */
  rows: Cell[][];
  /** Optional text under the table (how to read it). */
  notes?: string[];
}

export interface Point {
  x: number;
  y: number;
  /** Spread around y (min-max over rounds), drawn as an error bar. */
  low?: number;
  high?: number;
}

export interface Series {
  name: string;
  points: Point[];
  /** Reference lines (ceilings) are drawn dashed. */
  dashed?: boolean;
}

export interface Reference {
  value: number;
  label: string;
}

export interface LineChart {
  kind: 'line';
  /** File name under docs/benchmarks/, e.g. 'tiles-throughput.png'. */
  file: string;
  title: string;
  xLabel: string;
  yLabel: string;
  /** Log scale suits connections (1, 8, 64, 256) and latencies. */
  xLog?: boolean;
  yLog?: boolean;
  series: Series[];
  /** Horizontal lines across the plot: goals, ceilings. */
  references?: Reference[];
}

export interface BarChart {
  kind: 'bar';
  file: string;
  title: string;
  xLabel?: string;
  yLabel: string;
  /** One group per category; one bar per series within the group. */
  categories: string[];
  series: { name: string; values: (number | null)[]; low?: (number | null)[]; high?: (number | null)[] }[];
  yLog?: boolean;
  references?: Reference[];
}

export type Chart = LineChart | BarChart;

export interface Goal {
  /** What is promised, e.g. 'composite jpg tiles/s on 2 cores'. */
  text: string;
  measured: number | null;
  target: number;
  unit: string;
  /** 'min': measured >= target is met (throughput); 'max': measured <= target is met (latency). */
  direction: 'min' | 'max';
  met: boolean;
}

export interface Section {
  id: string;
  title: string;
  /** Machine, load, data, connections, caches: everything a reader needs to judge the figures. */
  conditions: string[];
  goals: Goal[];
  tables: Table[];
  charts: Chart[];
  /** Free text after the tables: what bounds each figure, anomalies seen. */
  findings?: string[];
  /** Earlier measurements and the changes they led to, oldest first: the part's history, kept with its figures. */
  history?: string[];
  /** Checks that failed (wrong statuses, errors): the report is still written, and the run exits 1. */
  failures?: string[];
  /** Everything measured, as is; goes to bench/results/<date>.json. */
  raw: unknown;
}

export function goal(
  text: string,
  measured: number | null,
  target: number,
  unit: string,
  direction: 'min' | 'max',
): Goal {
  const met = measured !== null && (direction === 'min' ? measured >= target : measured <= target);
  return { text, measured, target, unit, direction, met };
}
