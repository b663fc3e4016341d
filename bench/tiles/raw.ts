/** The tile part's raw figures: what bench/tiles/run.ts measures and report.ts reads. */
import type { ProfileSummary } from '../load/profile.js';
import type { EncoderResult } from './encoders.js';
import type { runMatrix } from './measure.js';
import type { TileLists } from './tile-lists.js';

export interface TilesSettings {
  connections: number[];
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  threads: number;
  /** Distinct tiles per list. */
  maxTiles: number;
  /** nadir's decoded-tile cache per process (NADIR_TILE_CACHE_MB) and GDAL_CACHEMAX per GDAL process, MB. */
  cacheMb: number;
  /** NADIR_WORKERS, when given. */
  nadirWorkers?: string;
  /** Re-run nadir under --cpu-prof for a pass-through, a composite jpg and a composite png run, and summarise. */
  profile: boolean;
  bareBodyBytes: number;
}

export interface TilesRaw {
  settings: TilesSettings;
  machine: { cpus: number; model: string; loadStart: number[]; loadEnd: number[] };
  versions: Record<string, string>;
  data: { surveys: number; older: unknown; newer: unknown };
  lists: Omit<TileLists, 'etags'>;
  nadirProcesses: number;
  /** Processes of the `--workers auto` server (a primary and one worker per core). */
  nadirClusterProcesses: number;
  pixelDifference: Record<string, number | undefined>;
  targets: { id: string; name: string; urls: number; expect: number }[];
  points: Awaited<ReturnType<typeof runMatrix>>;
  encoders: EncoderResult[];
  profiles: Record<string, ProfileSummary>;
  seconds: number;
}
