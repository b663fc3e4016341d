/** The raster part's raw figures: what bench/raster/run.ts measures and report.ts reads. */
import type { Asset } from '../../src/catalogue/survey.js';
import type { Sample } from './measure.js';
import type { Probe } from './probe.js';
import type { BenchSurvey } from './source.js';

export const CONTENDERS = ['nadir', 'engine', 'gdal', 'gdalTuned', 'rasterio'] as const;
export type Contender = (typeof CONTENDERS)[number];
export type Format = 'tif' | 'jpg';

export interface RasterSettings {
  sizes: number[];
  formats: Format[];
  rounds: number;
  /** Eight concurrent 5000 x 5000 renders, with and without admission control. */
  concurrency: boolean;
}

export interface CaseResult {
  format: Format;
  size: number;
  samples: Record<Contender, Sample[]>;
  /** A fresh `nadir serve` answering this one request: its memory before (after a 64 px request) and at the peak. */
  freshServer: { idleMb: number; peakMb: number };
  /** How each peer's file compares with nadir's (from the first round). */
  sameAsNadir: Record<'gdal' | 'gdalTuned' | 'rasterio', Agreement>;
}

export interface Agreement {
  /** gdalinfo -checksum of every band equal. */
  identical: boolean;
  /** Mean absolute difference per channel value (0-255), 0 when identical. */
  meanDifference: number;
}

export interface ConcurrencyResult extends Probe {
  label: string;
}

export interface RasterRaw {
  settings: RasterSettings;
  machine: { cpus: number; model: string; memoryGb: number; loadStart: number[]; loadEnd: number[] };
  versions: Record<string, string>;
  survey: { id: string; centre: BenchSurvey['centre']; ortho: Pick<Asset, 'width' | 'height' | 'gsd' | 'maxZoom'> };
  /** The server's resident memory before the first request, MB. */
  serverIdleMb: number;
  cases: CaseResult[];
  concurrency: ConcurrencyResult[];
  seconds: number;
}
