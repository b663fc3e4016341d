/**
 * What keeps a serving process within idle + GDAL_CACHEMAX + the raster budget (engine.ts), and
 * gives the memory of a burst of large renders back afterwards. Measured on 8 concurrent 5000 x
 * 5000 DsmChange renders against the 1 GiB budget (docs/reliability.md, "Memory under bursts"):
 *
 * - GDAL's block cache defaults to 5% of RAM (1.2 GB on a 24 GB machine). Renders write their
 *   GeoTIFFs and gdaldem rasters through it, so it filled with dirty blocks of requests the budget
 *   had already counted: peak 1.9 GB above idle. A serving process bounds it (SERVE_GDAL_CACHE_MB)
 *   unless GDAL_CACHEMAX says otherwise.
 * - glibc's malloc kept what GDAL's threads freed: 1.05 GB came back from a single malloc_trim(0)
 *   after the burst. GDAL's warp and encoding threads (16 of libuv's, and GDAL's own) allocate in
 *   up to 8 arenas per core, and after the first large free glibc raises its mmap threshold, so
 *   buffers of up to 32 MB come from those arenas too. The process caps the arenas and fixes the
 *   threshold at start (`boundRasterMemory`), and trims when a burst has ended (`TrimWhenIdle`).
 */
import gdal from 'gdal-async';
import { nativeAddon } from '../native/native-addon.js';
import type { AdmissionController } from './admission.js';
import { SYSTEM_TIMERS, type Timers } from './storage-watch.js';

/**
 * GDAL's block cache of a serving process, MB. Renders read each source block about once and write
 * each output block once, so a larger cache only holds blocks that are not read again; 128 MB is
 * what ingest uses too (ingest/ingest-memory.ts), and with it eight 5000 px renders ran as fast.
 */
export const SERVE_GDAL_CACHE_MB = 128;

/** malloc arenas for the whole process (MALLOC_ARENA_MAX in the environment wins). */
export const SERVE_MALLOC_ARENAS = 2;

/**
 * Allocations from this size up are mapped and unmapped by themselves, so freeing one gives it back
 * at once (MALLOC_MMAP_THRESHOLD_ in the environment wins). Setting it also stops glibc from raising
 * it to 32 MB after the first large free.
 */
export const SERVE_MMAP_THRESHOLD = 1024 * 1024;

/** A burst must have admitted this much work before a trim is worth its walk of the arenas. */
export const TRIM_AFTER_BYTES = 64 * 1024 * 1024;

/** How long the engine must stay idle before it trims: the end of a burst, not a pause within one. */
export const TRIM_IDLE_MS = 1_000;

/** glibc's malloc controls, from the tile-codec addon (native/tile-codec/src/malloc_binding.c). */
export interface MallocControl {
  /** mallopt(M_ARENA_MAX) and mallopt(M_MMAP_THRESHOLD); 0 leaves one as it is. False where not glibc. */
  tune(arenaMax: number, mmapThreshold: number): boolean;
  /** malloc_trim(0) on libuv's pool: whether memory was given back. */
  trim(): Promise<boolean>;
}

interface MallocAddon {
  mallocTune(arenaMax: number, mmapThreshold: number): boolean;
  mallocTrim(): Promise<boolean>;
}

export function glibcMalloc(): MallocControl {
  const addon = () => nativeAddon<MallocAddon>('tile-codec');
  return { tune: (arenas, threshold) => addon().mallocTune(arenas, threshold), trim: () => addon().mallocTrim() };
}

export interface RasterMemorySettings {
  /** GDAL_CACHEMAX as GDAL will read it: our default, or what the environment said. */
  gdalCacheMax: string;
  /** Whether glibc took the arena cap and the mmap threshold. */
  mallocTuned: boolean;
}

/**
 * Bounds a serving process's raster memory; run once at start, before GDAL opens a raster (it reads
 * GDAL_CACHEMAX when its cache first holds a block) and before GDAL's threads first allocate (a
 * thread keeps the arena it first took). Settings the environment gives are left as they are.
 */
export function boundRasterMemory(
  env: NodeJS.ProcessEnv = process.env,
  malloc: Pick<MallocControl, 'tune'> = glibcMalloc(),
): RasterMemorySettings {
  if (!env.GDAL_CACHEMAX) gdal.config.set('GDAL_CACHEMAX', String(SERVE_GDAL_CACHE_MB));
  let mallocTuned = false;
  try {
    mallocTuned = malloc.tune(
      env.MALLOC_ARENA_MAX ? 0 : SERVE_MALLOC_ARENAS,
      env.MALLOC_MMAP_THRESHOLD_ ? 0 : SERVE_MMAP_THRESHOLD,
    );
  } catch {
    // No addon (a process that never built it): glibc's defaults, as before.
  }
  return { gdalCacheMax: gdal.config.get('GDAL_CACHEMAX') ?? env.GDAL_CACHEMAX ?? '', mallocTuned };
}

export interface TrimWhenIdleOptions {
  malloc?: Pick<MallocControl, 'trim'>;
  timers?: Timers;
  idleMs?: number;
  minBytes?: number;
  /** Told how each trim went (tests, logs). */
  onTrim?(released: boolean): void;
}

/**
 * Gives freed memory back to the system when a burst of renders has ended: `idleMs` after the
 * admission controller last went idle, if nothing has started since and the work admitted since
 * the last trim reached `minBytes`. malloc_trim(0) runs on libuv's pool (30-130 ms measured after
 * eight 5000 px renders; tiles allocating meanwhile wait on its arena locks, once per burst).
 */
export class TrimWhenIdle {
  readonly #admission: AdmissionController;
  readonly #malloc: Pick<MallocControl, 'trim'>;
  readonly #timers: Timers;
  readonly #idleMs: number;
  readonly #minBytes: number;
  readonly #onTrim: ((released: boolean) => void) | undefined;
  #timer: unknown;
  #trimmedAt = 0;
  #trimming: Promise<void> | undefined;

  constructor(admission: AdmissionController, options: TrimWhenIdleOptions = {}) {
    this.#admission = admission;
    this.#malloc = options.malloc ?? glibcMalloc();
    this.#timers = options.timers ?? SYSTEM_TIMERS;
    this.#idleMs = options.idleMs ?? TRIM_IDLE_MS;
    this.#minBytes = options.minBytes ?? TRIM_AFTER_BYTES;
    this.#onTrim = options.onTrim;
    admission.onIdle(() => this.#idle());
  }

  /** The trim under way, if any (tests wait for it). */
  get trimming(): Promise<void> | undefined {
    return this.#trimming;
  }

  #idle(): void {
    if (this.#admission.stats.admittedCost - this.#trimmedAt < this.#minBytes) return;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    const timer = this.#timers.setTimeout(() => {
      if (this.#timer === timer) this.#timer = undefined;
      this.#trim();
    }, this.#idleMs);
    (timer as { unref?: () => void }).unref?.();
    this.#timer = timer;
  }

  #trim(): void {
    const stats = this.#admission.stats;
    // Work started since: its own end will schedule the trim.
    if (stats.inFlight > 0 || stats.queued > 0 || this.#trimming) return;
    this.#trimmedAt = stats.admittedCost;
    let trim: Promise<boolean>;
    try {
      trim = this.#malloc.trim();
    } catch (error) {
      trim = Promise.reject(error); // no addon: nothing to give back with
    }
    this.#trimming = trim
      .then(
        (released) => this.#onTrim?.(released),
        () => this.#onTrim?.(false),
      )
      .finally(() => {
        this.#trimming = undefined;
      });
  }
}
