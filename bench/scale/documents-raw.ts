/** The documents part's raw figures: what documents-run.ts measures and documents-report.ts reads. */
export type DocumentEngine = 'sqlite' | 'postgres';

export interface DocumentSettings {
  surveys: number;
  tags: number;
  /** Warm answers timed per document, after the cold one. */
  rounds: number;
  /** Items per page of the walk to the end. */
  pageLimit: number;
}

export interface DocumentTiming {
  name: string;
  path: string;
  /** The first answer of this document on a fresh server. */
  coldMs: number;
  /** Median and slowest of the warm answers. */
  warmMs: number;
  maxMs: number;
  bytes: number;
  /** Process CPU per answer (server and the client in one process), ms. */
  cpuMs: number;
  /** Longest the event loop was held while these answers were made, ms. */
  blockMs: number;
}

export interface WalkFigures {
  pages: number;
  items: number;
  seconds: number;
  /** Median, 99th percentile and slowest page; the medians of the first, last and slowest tenth of the pages. */
  medianPageMs: number;
  p99PageMs?: number;
  maxPageMs: number;
  firstTenthMs: number;
  lastTenthMs: number;
  slowestTenthMs?: number;
  blockMs: number;
}

export interface EngineDocuments {
  engine: DocumentEngine;
  /** Seconds to build (SQLite, through put; blank when reused) or bulk-load (PostgreSQL) the catalogue. */
  loadSeconds?: number;
  groups: number;
  timings: DocumentTiming[];
  walk: WalkFigures;
  /** In-run references: the old ways, timed on the same catalogue. */
  references: DocumentTiming[];
}

export interface DocumentsRaw {
  settings: DocumentSettings;
  machine: { cpus: number; model: string; loadStart: number[]; loadEnd: number[] };
  engines: EngineDocuments[];
  seconds: number;
}
