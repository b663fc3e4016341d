/** The storage part's raw figures: what bench/storage/run.ts measures and report.ts reads. */

export interface StorageSettings {
  /** Tiles of each kind requested (the tile part's lists, cut to this many). */
  maxTiles: number;
  /** Requests in flight during a cold pass (each tile once). */
  coldConcurrency: number;
  /** wrk's connections and measured seconds over the warm pass-through tiles. */
  connections: number;
  seconds: number;
  /** The raster download's width and height, px, and how many times it is fetched. */
  rasterSize: number;
  rasterRounds: number;
  /** Warm runs of each storage kind, taken in turn; the median counts. */
  warmRounds: number;
  /** Cold passes of each storage kind, each on a fresh server, taken in turn; the median counts (absent: 1). */
  coldRounds?: number;
  cacheMb: number;
}

export type StorageKind = 'local' | 's3';

/** What the server fetched from object storage (nothing is counted for a local folder). */
export interface Fetched {
  requests: number;
  bytes: number;
}

export interface Measurement {
  /** 'pass-through cold', 'pass-through warm', 'composite cold', 'raster'. */
  what: string;
  storage: StorageKind;
  /** Tiles or rasters answered. */
  count: number;
  seconds: number;
  perSecond: number;
  msEach: number;
  /** Totals over the measurement; undefined for local storage. */
  fetched?: Fetched;
  /** perSecond of every round, sorted, where there were several (warm, and cold since coldRounds). */
  rounds?: number[];
  /** CPU ms over the measurement (user + system, /proc): nadir's processes, and the S3 server's. */
  cpuMs?: { nadir: number; store?: number };
}

export interface StorageRaw {
  settings: StorageSettings;
  machine: { cpus: number; model: string; loadStart: number[]; loadEnd: number[] };
  versions: Record<string, string>;
  /** The object store: s3rver (npm @20minutes/s3rver) on loopback. */
  store: string;
  /**
   * Who counted the bucket's requests and bytes: s3rver's process itself ('store'), or (runs
   * before 2026-11-28's last, and absent here) a counting proxy in the benchmark process that
   * nadir reached s3rver through.
   */
  countedBy?: 'store';
  surveys: number;
  /** nadir's cache of blocks of the files it reads from the bucket (absent in runs before it). */
  blocks?: { blockBytes: number; cacheMb: number };
  measurements: Measurement[];
  seconds: number;
}
