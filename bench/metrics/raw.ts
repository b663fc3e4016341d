/** The metrics part's raw figures: what bench/metrics/run.ts measures and report.ts reads. */
import type { SeamCosts } from './seams.js';

export interface MetricsSettings {
  /** Rounds; in each, the three servers (off, on, control) are measured in turns. */
  rounds: number;
  /** wrk's measured seconds per server per round, after a warm-up run of `warmupSeconds`. */
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** Pass-through tiles requested round robin (the tile part's list, cut to this many). */
  tiles: number;
  /** The coverage catalogue's size (the coverage part's cached synthetic catalogue) and query points. */
  coverageSurveys: number;
  coveragePoints: number;
  /** A scrape of /metrics every this many seconds during the runs with metrics on, as Prometheus would. */
  scrapeEverySeconds: number;
}

/** One wrk run against one server. */
export interface MetricsRun {
  requests: number;
  requestsPerSecond: number;
  /** CPU time (user + system) of the server's process per answer, ms. */
  cpuMsPerAnswer: number;
}

export interface MetricsRound {
  round: number;
  off: MetricsRun;
  on: MetricsRun;
  /** A second server with metrics off: the noise of comparing two equal servers. */
  control: MetricsRun;
}

export interface MetricsRaw {
  settings: MetricsSettings;
  machine: { cpus: number; model: string; loadStart: number[]; loadEnd: number[] };
  /** By answer kind: 'pass-through tiles', 'coverage'. */
  kinds: { kind: string; request: string; rounds: MetricsRound[] }[];
  /** What the servers with metrics on counted, against what wrk saw answered (all runs, warm-ups included). */
  counted: { kind: string; answered: number; counted: number }[];
  /** The recording's own cost per answer, timed in process (seams.ts). */
  seams: SeamCosts;
  seconds: number;
}
