/** The scale part's raw figures: what bench/scale/run.ts measures and report.ts reads. */
import type { HttpFigures } from '../coverage/raw.js';

export interface ScaleSettings {
  /** Catalogue sizes for coverage on SQLite and on PostgreSQL. */
  sizes: number[];
  /** Coverage: wrk's connections, measured seconds after warm-up, distinct query points. */
  connections: number;
  seconds: number;
  warmupSeconds: number;
  points: number;
  /** Tiles: wrk's connections and seconds per server configuration, pass-through tiles requested. */
  tileConnections: number;
  tileSeconds: number;
  /** Runs of each set-up, taken in turn; the median counts. */
  tileRounds: number;
  maxTiles: number;
  /** NADIR_TILE_CACHE_MB of every tile server. */
  cacheMb: number;
}

export type Engine = 'sqlite' | 'postgres';

export interface CoverageOnEngine {
  engine: Engine;
  surveys: number;
  /** Seconds to build (SQLite: when not reused from bench/work/coverage) or load (PostgreSQL) the catalogue. */
  buildSeconds?: number;
  /**
   * 'off': NADIR_COVERAGE_CACHE_MB=0, so every request searches the catalogue, as requests for new
   * places do; 'on' (and older results, where it is absent): the page cache answers repeats.
   */
  cache?: 'on' | 'off';
  /** PostgreSQL only: its server processes' CPU ms per request during the measured run (older results: absent). */
  databaseCpuMsPerRequest?: number;
  /**
   * PostgreSQL only: NADIR_DATABASE_CONNECTIONS, the pool of the one nadir process; absent: the
   * default (older results: always the default, then 20).
   */
  databaseConnections?: number;
  http: HttpFigures;
}

/** One server configuration's tile rate: one process with or without Redis, or two behind nginx. */
export type TileSetup = 'memory' | 'redis' | 'two-behind-nginx';

export interface TileRate {
  setup: TileSetup;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  statuses: Record<string, number>;
  /** tiles/s of every round, sorted (older results: absent). */
  rounds?: number[];
  /** Every round in the order run (older results: absent): the rate and the CPU it cost. */
  roundFigures?: TileRound[];
}

export interface TileRound {
  round: number;
  requestsPerSecond: number;
  /** CPU ms of the set-up's nadir processes per tile answered. */
  cpuMsPerTile: number;
  /** CPU ms of redis-server per tile answered (set-ups that use it). */
  redisCpuMsPerTile?: number;
}

export interface ScaleRaw {
  settings: ScaleSettings;
  machine: { cpus: number; model: string; memoryGb: number; loadStart: number[]; loadEnd: number[] };
  versions: Record<string, string>;
  coverage: CoverageOnEngine[];
  /**
   * catalogue.search on SQLite in the benchmark's own process at the goal size, one caller, the
   * same points (bench/coverage/floor.ts), in the same run: what an uncached answer's CPU is held
   * against. Older results: absent.
   */
  search?: { surveys: number; msPerSearch: number; cpuMsPerSearch: number };
  /** PostgreSQL's shared_buffers, MB (older results: absent, the default 128 MB). */
  postgresSharedBuffersMb?: number;
  tiles: TileRate[];
  /** Pass-through tiles the tile runs cycle through. */
  tileCount: number;
  seconds: number;
}
