/** The coverage part's raw figures: what bench/coverage/run.ts measures and report.ts reads. */
import type { ProfileSummary } from '../load/profile.js';
import type { MatchStats, Rate } from './floor.js';
import type { HttpFigures } from './http.js';

export type { HttpFigures };

export interface CoverageSettings {
  sizes: number[];
  rounds: number;
  /** wrk's measured seconds per size and round, after `warmupSeconds` thrown away. */
  seconds: number;
  warmupSeconds: number;
  /** Seconds per floor (raw SQL, search) per size and round. */
  floorSeconds: number;
  connections: number;
  /** Distinct query points per size, requested round robin. */
  points: number;
  /** NADIR_WORKERS values to measure: '1' (serve's default) and 'auto' (one process per core). */
  workers: string[];
  /** Run the largest size once more under --cpu-prof and summarise where the server's time goes. */
  profile: boolean;
}

export interface SizeRound {
  round: number;
  /** By NADIR_WORKERS value. */
  http: Record<string, HttpFigures>;
  sql: Rate;
  search: Rate;
}

export interface SizeResult {
  surveys: number;
  databaseMb: number;
  /** Seconds to build the catalogue, when this run built it (else it was reused from bench/work/coverage). */
  buildSeconds?: number;
  cities: number;
  regionKm: number;
  matches: MatchStats;
  rounds: SizeRound[];
}

export interface CoverageRaw {
  settings: CoverageSettings;
  machine: { cpus: number; model: string; memoryGb: number; loadStart: number[]; loadEnd: number[] };
  versions: Record<string, string>;
  request: string;
  sizes: SizeResult[];
  profile?: { surveys: number; requestsPerSecond: number; summary: ProfileSummary };
  seconds: number;
}
