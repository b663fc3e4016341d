/** What bench/ingest/delivery.ts measures: the raw figures delivery-report.ts turns into a table. */
import type { ProcessPeak } from './proc-tree.js';

export type DeliveryProductName = 'rgb' | 'dsm';
export type Contender = 'gdal' | 'nadir-1' | 'nadir-2';

/** One generated file of a delivery, as read back with GDAL after writing it. */
export interface DeliveryTile {
  /** Relative to the delivery folder, e.g. `rgb/16N_735960_3370880.tif`. */
  file: string;
  epsg: number;
  width: number;
  height: number;
  /** Metres per pixel in the tile's CRS. */
  resolution: number;
  /** Lower-left corner in the tile's CRS, metres. */
  originX: number;
  originY: number;
  /** Pixels marked valid (by the mask or nodata) by construction. */
  validPixels: number;
  bytes: number;
}

export interface DeliveryProduct {
  name: DeliveryProductName;
  /** The manifest's content type. */
  contentType: 'Vert' | 'DetailDsm';
  description: string;
  /** How the data is marked: `internal mask` (GDAL_TIFF_INTERNAL_MASK) or `nodata -9999`. */
  dataMarking: string;
  /** COMPRESSION and PHOTOMETRIC as GDAL reads them back from every file. */
  compression: string;
  /** The manifest nadir is given, as written (its glob is relative to the manifest). */
  manifest: unknown;
  tileCount: number;
  tilesByCrs: Record<string, number>;
  tileWidth: number;
  tileHeight: number;
  /** Sum of width x height over the files: what MP/s are counted in. */
  pixels: number;
  validPixels: number;
  bytes: number;
  tiles: DeliveryTile[];
}

export interface DeliveryStep {
  command: string;
  seconds: number;
  /** `/usr/bin/time -v` "Maximum resident set size". */
  peakRssBytes: number;
  userSeconds: number;
  systemSeconds: number;
}

/** One timed contender on one product in one round. */
export interface DeliveryRun {
  round: number;
  product: DeliveryProductName;
  contender: Contender;
  ok: boolean;
  /** The failure's last lines of stderr, when `ok` is false. */
  error?: string;
  /** 1-minute load average when the run started. */
  loadAverage: number;
  seconds: number;
  megapixelsPerSecond: number;
  userSeconds: number;
  systemSeconds: number;
  /** Largest single process (`/usr/bin/time -v`; for GDAL the largest step). */
  peakRssBytes: number;
  /** The main process's own peak (nadir: the `nadir ingest` process; GDAL: gdalwarp), sampled. */
  mainPeakRssBytes: number;
  /** The largest peak of a worker (a descendant of the main process), sampled; 0 when none. */
  workerPeakRssBytes: number;
  workerCount: number;
  /** The largest sum of the tree's RSS at one sample. */
  peakTotalRssBytes: number;
  /** The sum of every process's own peak (upper bound on the total). */
  sumOfPeaksBytes: number;
  processes: ProcessPeak[];
  steps: DeliveryStep[];
  commands: string[];
  outputFiles: number;
  outputBytes: number;
  /** nadir's last progress lines (stderr), for the record. */
  progress?: string[];
}

export interface DeliverySummary {
  product: DeliveryProductName;
  contender: Contender;
  /** Rounds that finished. */
  rounds: number;
  /** Median over the rounds that finished. */
  seconds: number;
  megapixelsPerSecond: number;
  /** Maxima over the rounds. */
  peakRssBytes: number;
  workerPeakRssBytes: number;
  peakTotalRssBytes: number;
  /** nadir MP/s / GDAL MP/s (median seconds); only for nadir. */
  ratioToGdal?: number;
}

/** One queued ingest by two `nadir worker`s over PostgreSQL and S3 (delivery-fleet.ts). */
export interface FleetRun {
  mode: 'uninterrupted' | 'killed';
  product: DeliveryProductName;
  survey: string;
  ok: boolean;
  error?: string;
  /** From `nadir ingest --queue --detach` to the survey's first visibility. */
  seconds: number;
  megapixelsPerSecond: number;
  /** The sending command alone (checking every file, reserving the version). */
  sendSeconds: number;
  /** Jobs each worker finished (its log's `done` lines). */
  jobsDone: Record<string, number>;
  /** Each worker's tree (the worker and its job process), the largest VmHWM. */
  workerPeakRssBytes: Record<string, number>;
  killed?: { worker: string; afterSeconds: number; jobsDoneBefore: number; wasCoordinating: boolean };
  /** Coordinating steps the survey took (each waits at most half the job timeout). */
  coordinatingSteps: number;
  /** Jobs and steps pg-boss gave another try (a killed worker's). */
  retried: { jobs: number; steps: number };
  storedFiles: number;
  storedBytes: number;
  /** Whether the survey was visible while a job was unfinished (never expected). */
  visibleBeforeDone: boolean;
  /** Files the survey names that were not in the bucket when it became visible. */
  missingAtVisibility: string[];
}

export interface FleetProduct {
  product: DeliveryProductName;
  runs: FleetRun[];
  /** Files of the two runs compared byte for byte, by their path under the survey's version. */
  comparedFiles: number;
  identicalFiles: number;
  differing: string[];
}

export interface DeliveryRaw {
  bench: 'ingest-delivery';
  quick: boolean;
  rounds: number;
  startedAt: string;
  finishedAt: string;
  conditions: {
    /** 1, 5 and 15-minute load averages before anything was generated. */
    loadAverageAtStart: number[];
    nproc: number;
    memoryBytes: number;
    gdal: string;
    /** GDAL_CACHEMAX given to every process of both sides (environment and --config), MB. */
    gdalCacheMaxMb: number;
    /** gdalwarp -wm, and nadir's own warp chunk (WARP_MEMORY_MB), MB. */
    warpMemoryMb: number;
    threads: string;
    node: string;
    sampleIntervalMs: number;
    /** Generating the delivery (not timed against anything). */
    generateSeconds: number;
  };
  area: {
    description: string;
    /** The two CRSs and the column range each covers, in that CRS's metres. */
    zones: { epsg: number; minX: number; maxX: number; minY: number; maxY: number }[];
  };
  products: DeliveryProduct[];
  runs: DeliveryRun[];
  summary: DeliverySummary[];
  /** nadir workers=2 MP/s over workers=1 MP/s, by product. */
  scaling: Partial<Record<DeliveryProductName, number>>;
  /** Two `nadir worker`s over PostgreSQL and S3, uninterrupted and with one killed. */
  fleet?: { jobTimeoutSeconds: number; products: FleetProduct[] };
}
