/**
 * Everything that answers tile requests, built once by the composition root: the catalogue lookup
 * with its neighbourhood cache, the COG reader with its caches, and the compositor. Every cache is
 * bounded (entries and bytes) by the options.
 */
import { availableParallelism } from 'node:os';
import type { CacheStats } from '../cache/lru.js';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import type { SurveyStorage } from '../storage/storage.js';
import { CogFiles } from './cog-files.js';
import { CogTiles } from './cog-tiles.js';
import { PlanMemo } from './plan-memo.js';
import { TileCandidates } from './tile-candidates.js';
import { TileRenderer } from './tile-renderer.js';
import { WorkGate } from './work-gate.js';

export interface TileEngineOptions {
  /** Decoded 256 x 256 tiles kept in memory, MiB. */
  pixelCacheMb: number;
  /** Stored JPEG tiles kept in memory for pass-through, MiB. */
  jpegCacheMb: number;
  /** COG files kept open (each holds its offset tables, a few KiB to a few MiB). */
  maxOpenCogs: number;
  /** Cached catalogue answers (one per neighbourhood and filter). */
  candidateCacheEntries: number;
  /** Cached tile masks (at most 32 MiB of partial ones, 8 KiB each). */
  maskCacheEntries: number;
  /** JPEG decodes and tile encodes running at once: one per core (work-gate.ts says why). */
  imageSlots: number;
}

export const DEFAULT_TILE_ENGINE_OPTIONS: TileEngineOptions = {
  pixelCacheMb: 256,
  jpegCacheMb: 64,
  maxOpenCogs: 256,
  candidateCacheEntries: 4096,
  maskCacheEntries: 65_536,
  imageSlots: availableParallelism(),
};

export class TileEngine {
  readonly candidates: TileCandidates;
  readonly renderer: TileRenderer;
  /** Plans and ETags of location tiles, shared by every way a tile request arrives. */
  readonly plans = new PlanMemo();
  readonly #files: CogFiles;
  readonly #tiles: CogTiles;

  constructor(
    catalogue: SurveyCatalogue,
    storage: SurveyStorage,
    options: TileEngineOptions = DEFAULT_TILE_ENGINE_OPTIONS,
  ) {
    this.#files = new CogFiles(storage, options.maxOpenCogs);
    const gate = new WorkGate(options.imageSlots);
    const tiles = new CogTiles(this.#files, {
      pixelCacheBytes: options.pixelCacheMb * 1024 * 1024,
      jpegCacheBytes: options.jpegCacheMb * 1024 * 1024,
      maskCacheEntries: options.maskCacheEntries,
      maskCacheBytes: 32 * 1024 * 1024,
      gate,
    });
    this.#tiles = tiles;
    this.candidates = new TileCandidates(catalogue, options.candidateCacheEntries);
    this.renderer = new TileRenderer(tiles, gate);
  }

  /** The stored-JPEG and decoded-pixel caches' figures, for metrics. */
  get cacheStats(): { jpeg: CacheStats; pixels: CacheStats } {
    return this.#tiles.cacheStats;
  }

  close(): void {
    this.#files.close();
  }
}
