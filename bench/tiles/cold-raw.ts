/** The cold part's raw figures: what bench/tiles/cold-run.ts measures and cold-report.ts reads. */
import type { CpuSample } from '../load/cpu.js';
import type { ProfileSummary } from '../load/profile.js';
import type { Point } from './measure.js';

export type ColdFormat = 'jpg' | 'png';

export interface ColdSettings {
  connections: number[];
  rounds: number;
  /** Longest a run lasts; it ends sooner when its share of the list is done. */
  seconds: number;
  /** Load on the warm-up tiles (never measured) before each run, s. */
  warmupSeconds: number;
  /** Tiles set aside from the list for the warm-up. */
  warmupTiles: number;
  threads: number;
  formats: ColdFormat[];
  /** GDAL_CACHEMAX of every GDAL process, MB. */
  gdalCacheMb: number;
  /** nadir's NADIR_TILE_CACHE_MB as deployed by default. */
  defaultCacheMb: number;
  /** Profile nadir (cache 0) under a cold jpg run at 64 connections. */
  profile: boolean;
  /** Another checkout's nadir, measured as well as this one ("before"), when given. */
  baseRoot?: string;
  /** Only these servers (ids: nadir, nadir-0, nadir-before, mapserver, rasterio); all by default. */
  only?: string[];
}

export interface ColdPoint extends Point {
  format: ColdFormat;
  /** The server's CPU time over the run (all its processes), and by thread name. */
  cpu: CpuSample;
  /** 1-minute load average when the run started. */
  load: number;
}

export interface ColdProfile {
  tilesPerSecond: number;
  requests: number;
  cpu: CpuSample;
  summary: ProfileSummary;
}

/** Server-Timing of tiles asked for one at a time on an idle, fresh server: medians, ms. */
export interface IdleTimings {
  target: string;
  format: ColdFormat;
  tiles: number;
  renderMs: number;
  catalogueMs: number;
  /** Client-side wall time per tile. */
  wallMs: number;
}

export interface ColdRaw {
  settings: ColdSettings;
  machine: { cpus: number; model: string; loadStart: number[]; loadEnd: number[] };
  data: { older: unknown; newer: unknown };
  scan: { zooms: number[]; requested: number; answered: number; composite: number };
  /** Tiles measured (the list without the warm-up tiles), and by zoom. */
  measuredTiles: number;
  byZoom: Record<string, number>;
  targets: { id: string; name: string }[];
  pixelDifference: Record<string, number>;
  points: ColdPoint[];
  idle: IdleTimings[];
  /** By server id: nadir-0, and nadir-before when measured. */
  profiles: Record<string, ColdProfile>;
  seconds: number;
}
