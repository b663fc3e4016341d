/** The change part's raw figures: what bench/change/run.ts measures and report.ts reads. */
import type { Sample } from '../raster/measure.js';

export const CHANGE_CONTENDERS = ['engine', 'gdal', 'gdalTuned'] as const;
export type ChangeContender = (typeof CHANGE_CONTENDERS)[number];

export interface ChangeRaw {
  size: number;
  rounds: number;
  /** The AOI: centre and radius (ground metres), and the two demo surveys compared. */
  aoi: { lon: number; lat: number; radius: number };
  surveys: { after: string; before: string };
  /** What the command line used to subtract, and why (gdal_calc.py needs Python's GDAL bindings). */
  subtraction: string;
  commands: string[][];
  machine: { cpus: number; model: string; loadStart: number[]; loadEnd: number[] };
  versions: Record<string, string>;
  /** One list per contender, the rounds interleaved (engine, gdal, gdalTuned, engine, ...). */
  samples: Record<ChangeContender, Sample[]>;
  /** nadir's GeoTIFF against the command line's: largest |difference| where both hold a value, and nodata agreement. */
  agreement: { maxDifference: number; sameNodata: boolean; compared: number };
  seconds: number;
}
