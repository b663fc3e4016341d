/** The soak's raw figures (bench/soak/), shared by its parts and its report. */
import type { WrkResult } from '../load/wrk.js';
import type { ProcessSample } from './process-sample.js';

export interface TrafficRaw {
  minutes: number;
  connections: number;
  /** Entries of each kind in the URL list wrk walks. */
  mix: { tiles: number; coverage: number; downloads: number };
  wrk: Omit<WrkResult, 'output'>;
  /** Answers other than 200, 304, 429 and 503, plus socket errors are in wrk.socketErrors. */
  unexpected: number;
  samples: ProcessSample[];
}

export interface BurstRaw {
  /** Which allocator setting the server ran with. */
  allocator: string;
  env: Record<string, string>;
  downloads: number;
  size: number;
  statuses: Record<string, number>;
  burstSeconds: number;
  idleRssBytes: number;
  peakRssBytes: number;
  /** RSS every second for 30 s after the burst. */
  after: { at: number; rssBytes: number }[];
  /** Seconds after the burst until RSS was within 100 MB of idle; undefined: not within 30 s. */
  settledSeconds: number | undefined;
}

export interface IngestCrashRaw {
  /** Source width and height, px. */
  size: number;
  fullIngestSeconds: number;
  attempts: { killAfterMs: number; outcome: 'killed' | 'finished'; visibleVersion: number; stagingFolders: number }[];
  finalVersion: number;
  stagingLeft: number;
}

export interface ServeCrashRaw {
  kills: number;
  tokens: number;
  /** Tokens whose first download was answered 200 (before or after a crash). */
  downloadedTokens: number;
  /** Transactions recorded for the soak's account: must equal downloadedTokens. */
  transactions: number;
  tilesServed: number;
  tilesCounted: number;
  /** Tiles served in the flush interval before a kill: what the counts may lose. */
  tilesAtRisk: number;
  flushSeconds: number;
  rounds: { killed: boolean; tilesServed: number; downloadsBilledSoFar: number }[];
}

export interface MemoryRaw {
  demo: { seconds: number; peakRssBytes: number };
  ingest: { size: number; seconds: number; peakRssBytes: number };
}

export interface SoakRaw {
  date: string;
  command: string;
  machine: { cpus: number; model: string; memoryGb: number; loadStart: number[]; loadEnd: number[] };
  traffic?: TrafficRaw;
  bursts?: BurstRaw[];
  memory?: MemoryRaw;
  ingestCrashes?: IngestCrashRaw;
  serveCrashes?: ServeCrashRaw;
  /** Parts (traffic, burst, memory, crashes) carried over from an earlier run by --only: the date each was measured. */
  carried?: Record<string, string>;
  seconds: number;
}
