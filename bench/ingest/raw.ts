/** What bench/ingest/run.ts measures: the raw figures report.ts turns into a section. */

/** One timed child process (or a sequence of them, for the reference). */
export interface IngestMeasurement {
  /** Wall-clock seconds from start to exit. */
  seconds: number;
  /** Peak resident set size of the process (the largest over the steps), bytes. */
  peakRssBytes: number;
  /** The commands run, for the record. */
  commands: string[];
}

export interface IngestCase {
  name: 'rgb' | 'dsm';
  /** What the generated source is. */
  description: string;
  width: number;
  height: number;
  /** Source pixels (width x height): what MP/s are counted in. */
  pixels: number;
  sourceBytes: number;
  nadir: IngestMeasurement & {
    /** Size of the COG nadir stored. */
    outputBytes: number;
  };
  reference: IngestMeasurement & {
    /** gdalwarp and gdal_translate separately. */
    steps: { command: string; seconds: number; peakRssBytes: number }[];
    outputBytes: number;
  };
}

export interface IngestRaw {
  quick: boolean;
  startedAt: string;
  machine: { cpus: number; memoryBytes: number; gdal: string; loadAverage: number[] };
  /** Settings both sides ran with. */
  threads: string;
  cases: IngestCase[];
}
