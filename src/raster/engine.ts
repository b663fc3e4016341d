import gdal from 'gdal-async';
import type { Asset } from '../catalogue/survey.js';
import { NadirError } from '../errors.js';
import type { Aoi } from '../geo/aoi.js';
import { type AoiGrid, aoiGrid } from '../geo/aoi-grid.js';
import { filesForBox, type LaidOutAsset } from '../geo/asset-layout.js';
import { type SurveyStorage, storageUnavailable } from '../storage/storage.js';
import { AdmissionController, type AdmissionOptions, type Permit } from './admission.js';
import type { HeightRange } from './colour-ramp.js';
import {
  type ChangeFigures,
  type ChangeRaster,
  changeRaster,
  figuresOf,
  type HeightChange,
  heightsOnGrid,
  readChange,
  writeChangeGeoTiff,
  writeChangePicture,
} from './dsm-change.js';
import { renderDsmPicture } from './dsm-picture.js';
import { CONTENT_TYPE, type ImageFormat, isWorldFileFormat, type RasterFormat, type RenderedFile } from './formats.js';
import { forgetRemoteFiles } from './gdal-curl-cache.js';
import { validRange } from './height-range.js';
import { DEFAULT_ENCODING, type PictureEncoding, renderImagery } from './imagery.js';
import { type MallocControl, TrimWhenIdle } from './memory.js';
import { Scratch } from './scratch.js';
import { StorageWatch, type Timers } from './storage-watch.js';
import { DEFAULT_TUNING, fileHoldsSurveyPixels, type GdalTuning, type PixelKind, warpToGeoTiff } from './warp.js';
import { renderWorldFile } from './world-file.js';

/** What the engine needs to find an asset's files: a single COG, or shards (geo/asset-layout.ts). */
export type OpenableAsset = Pick<LaidOutAsset, 'uri' | 'shards'>;

export interface RenderRequest {
  /** The survey's asset of the requested type (its COG, and whether it is imagery or heights). */
  asset: OpenableAsset & Pick<Asset, 'kind'>;
  aoi: Aoi;
  /** Pixels per side (from `parseSize`). */
  size: number;
  format: RasterFormat;
  /** Abort while queued for admission (e.g. the client went away). */
  signal?: AbortSignal;
  /**
   * Find out whether the image holds any pixel of the asset (`empty` in the result), for an AOI
   * the catalogue cannot vouch for (aoi-pixels.ts). A DSM picture always knows.
   */
  checkEmpty?: boolean;
}

export interface RenderResult extends RenderedFile {
  grid: AoiGrid;
  /** DetailDsm jpg/png: the heights the colour ramp spans (absent when the AOI has no heights). */
  heightRange?: HeightRange;
  /** The image holds no pixel of the asset (known when checkEmpty was asked, and for DSM pictures). */
  empty: boolean;
  /** For Server-Timing: time waiting for admission and rendering, ms. */
  timings: { queueMs: number; renderMs: number };
}

/** A DsmChange request: two DetailDsm assets on one AOI grid (docs/imagery.md, "DsmChange"). */
export interface ChangeRenderRequest {
  after: OpenableAsset;
  before: OpenableAsset;
  aoi: Aoi;
  size: number;
  /** A raster format, or `json` for the figures alone. */
  format: RasterFormat | 'json';
  /** Metres beyond which a pixel counts as lost or gained (the figures). */
  threshold: number;
  signal?: AbortSignal;
}

export interface ChangeRenderResult {
  grid: AoiGrid;
  /** The file; absent for `json`. */
  file?: RenderedFile;
  /** For `json`. */
  figures?: ChangeFigures;
  /** No pixel of the AOI has a height in both surveys. */
  empty: boolean;
  timings: { queueMs: number; renderMs: number };
}

export interface RasterEngineOptions {
  /**
   * Where survey files are: GDAL opens the path it names (a local file, /vsis3/, /vsicurl/); `ping`
   * tells a storage outage from a bug; with `storageTimeoutMs`, `probe` reads the probes.
   */
  storage: Pick<SurveyStorage, 'gdalPath' | 'ping'> & Partial<Pick<SurveyStorage, 'probe'>>;
  /**
   * NADIR_STORAGE_TIMEOUT_MS for remote storage: a render whose store stops answering is
   * STORAGE_UNAVAILABLE within about this (storage-watch.ts). Unset: no watch (a local folder).
   */
  storageTimeoutMs?: number;
  tuning?: Partial<GdalTuning>;
  encoding?: Partial<PictureEncoding>;
  /** `budget` is bytes of working memory (see `workingBytesPerPixel`). */
  admission?: Partial<AdmissionOptions>;
  /** Giving memory back after bursts (memory.ts): glibc's malloc_trim unless a test says otherwise. */
  malloc?: Pick<MallocControl, 'trim'>;
  /** The storage watch's and the trim's timers: the system's unless a test moves its own. */
  timers?: Timers;
}

/**
 * Default working-memory budget: 1 GiB. A 5000 x 5000 imagery request reserves 300-350 MB and a
 * 5000 x 5000 DSM picture 500 MB, so two or three of the largest run at once and the rest wait
 * (up to 10 s) or get OVERLOADED; eight concurrent 5000 x 5000 requests cannot add up to the
 * 2.5-3.5 GB they would need side by side. Decoded COG tiles and blocks being written live in
 * GDAL's block cache, which is shared and bounded on its own (GDAL_CACHEMAX: 128 MB in a serving
 * process unless set, raster/memory.ts; GDAL's own default, 5% of RAM, let it hold 1.2 GB), so
 * the process stays below idle + GDAL_CACHEMAX + budget, and comes back near idle after a burst
 * (TrimWhenIdle).
 */
export const DEFAULT_ADMISSION: AdmissionOptions = {
  budget: 1024 * 1024 * 1024,
  maxWaitMs: 10_000,
};

/**
 * Peak working memory per output pixel, bytes, by pipeline, rounded up from bench/raster/ on
 * 5000 x 5000 outputs (peak RSS above the idle process; docs/benchmarks-raster.md): the warper's
 * chunks, the output raster (MEM driver or GDAL's block cache), the encoded file, and for the DSM
 * picture its colour and shade rasters. Re-measured for issue 32 with GDAL's cache bounded
 * (raster/memory.ts), one render alone, 5000 px: imagery 7.6 B/px (tif, jpg, png), heights tif
 * 5.3 (8.3 with the cache's 128 MB), DSM picture 10.0 (16.4), DsmChange 12.4 in every format
 * (docs/reliability.md, "Memory under bursts").
 */
export function workingBytesPerPixel(kind: PixelKind | 'change', format: ImageFormat | 'json'): number {
  // DsmChange: two warped MEM rasters, the change written over the first (dsm-change.ts). Before
  // issue 32 the heights were also copied into two JavaScript arrays, freed only by V8's next
  // collection: 16.9 B/px for a tif, over this reservation.
  if (kind === 'change') return format === 'tif' || format === 'json' ? 14 : 16;
  if (kind === 'rgb') return format === 'tif' ? 12 : 14;
  return format === 'tif' ? 10 : 20;
}

/**
 * What every render holds besides its pixels: datasets, the warper's state, GDAL's per-call
 * buffers, scratch file headers. Measured for issue 32: 64 concurrent 256 px renders (DsmChange,
 * imagery, DSM pictures) grew the process by 222 MB, 3.5 MB each, where their pixels reserved 1 MB
 * each; without this term a burst of small renders would be admitted far past the budget.
 */
export const RENDER_OVERHEAD_BYTES = 4 * 1024 * 1024;

/**
 * The imagery engine: renders one AOI of one survey asset as tif, jpg or png on the AOI grid,
 * or its world file. Admission control bounds the memory of renders in flight. The HTTP route
 * only has to check the token, find the asset, and send `body` with `contentType`.
 */
export class RasterEngine {
  readonly admission: AdmissionController;
  readonly tuning: GdalTuning;
  readonly encoding: PictureEncoding;
  /** The storage deadline (remote storage only). */
  readonly storageWatch: StorageWatch | undefined;
  readonly trimmer: TrimWhenIdle;
  readonly #storage: RasterEngineOptions['storage'];

  constructor(options: RasterEngineOptions) {
    this.#storage = options.storage;
    this.tuning = { ...DEFAULT_TUNING, ...options.tuning };
    this.encoding = { ...DEFAULT_ENCODING, ...options.encoding };
    this.admission = new AdmissionController({ ...DEFAULT_ADMISSION, ...options.admission });
    this.trimmer = new TrimWhenIdle(this.admission, { malloc: options.malloc, timers: options.timers });
    const { probe } = options.storage;
    if (options.storageTimeoutMs !== undefined && probe) {
      this.storageWatch = new StorageWatch({
        // From the store itself: a byte held in a cache would say a store that has gone answers.
        probe: (location) => probe.call(options.storage, location),
        timeoutMs: options.storageTimeoutMs,
        timers: options.timers,
      });
    }
  }

  /** Working-memory bytes a request reserves from the admission budget. */
  cost(kind: PixelKind | 'change', format: ImageFormat | 'json', size: number): number {
    return RENDER_OVERHEAD_BYTES + size * size * workingBytesPerPixel(kind, format);
  }

  async renderAoi(request: RenderRequest): Promise<RenderResult> {
    const { asset, aoi, size, format } = request;
    const grid = aoiGrid(aoi, size);
    if (isWorldFileFormat(format)) {
      // Pure arithmetic: no pixels, no admission.
      return { ...renderWorldFile(aoi, size, format), grid, empty: false, timings: { queueMs: 0, renderMs: 0 } };
    }
    const uris = [asset.uri];
    await this.storageWatch?.admit(uris);
    const queued = performance.now();
    const permit = await this.admission.acquire(this.cost(asset.kind, format, size), request.signal);
    const started = performance.now();
    const { body, heightRange, empty } = await this.#run(
      permit,
      uris,
      this.#render(asset, grid, aoi, format, request.checkEmpty ?? false),
    );
    const timings = { queueMs: started - queued, renderMs: performance.now() - started };
    return { body, contentType: CONTENT_TYPE[format], fileExtension: format, grid, heightRange, empty, timings };
  }

  /**
   * A render's GDAL work under the storage deadline: its answer, or STORAGE_UNAVAILABLE as soon as
   * the store is found not answering. The admission permit is released when the work has really
   * ended, however long after the answer that is: its memory is held until then (and the work
   * cleans up its own datasets and scratch files).
   */
  async #run<T>(permit: Permit, uris: string[], work: Promise<T>): Promise<T> {
    work.then(
      () => permit.release(),
      () => permit.release(),
    );
    try {
      return await (this.storageWatch ? this.storageWatch.guard(work, uris) : work);
    } catch (error) {
      throw await this.#blame(error, uris);
    }
  }

  /**
   * DsmChange: both DSMs warped onto the AOI grid exactly as DetailDsm downloads are, subtracted
   * (after - before), then written as a Float32 GeoTIFF, a diverging-ramp picture, or summed into
   * figures. World files are the grid's, as for every type.
   */
  async renderChange(request: ChangeRenderRequest): Promise<ChangeRenderResult> {
    const { aoi, size, format } = request;
    const grid = aoiGrid(aoi, size);
    if (format !== 'json' && isWorldFileFormat(format)) {
      const file = renderWorldFile(aoi, size, format);
      return { grid, file, empty: false, timings: { queueMs: 0, renderMs: 0 } };
    }
    const uris = [request.after.uri, request.before.uri];
    await this.storageWatch?.admit(uris);
    const queued = performance.now();
    const permit = await this.admission.acquire(this.cost('change', format, size), request.signal);
    const started = performance.now();
    const result = await this.#run(permit, uris, this.#renderChange(request, format, grid));
    return { ...result, timings: { queueMs: started - queued, renderMs: performance.now() - started } };
  }

  async #renderChange(
    request: ChangeRenderRequest,
    format: ImageFormat | 'json',
    grid: AoiGrid,
  ): Promise<Omit<ChangeRenderResult, 'timings'>> {
    const threshold = format === 'json' ? request.threshold : undefined;
    const { raster, tally } = await this.#changeRaster(request.after, request.before, grid, threshold);
    const scratch = new Scratch();
    let owned = true;
    try {
      if (tally.compared === 0) return { grid, empty: true };
      if (format === 'json') return { grid, figures: figuresOf(tally, grid, request.threshold), empty: false };
      let body: Buffer;
      if (format === 'tif') body = await writeChangeGeoTiff(raster, this.tuning, scratch);
      else {
        owned = false; // closed by writeChangePicture as soon as the colours are made
        body = await writeChangePicture(raster, format, this.encoding, scratch);
      }
      return { grid, file: { body, contentType: CONTENT_TYPE[format], fileExtension: format }, empty: false };
    } finally {
      if (owned) raster.close();
      await scratch.releaseAll();
    }
  }

  /**
   * after - before of two DSMs on any grid (a map tile's: tileGrid), with the admission of a
   * change GeoTIFF of that many pixels: the values a DsmChange.tif of that grid would hold.
   */
  async heightChangeOn(
    after: OpenableAsset,
    before: OpenableAsset,
    grid: AoiGrid,
    signal?: AbortSignal,
  ): Promise<HeightChange> {
    const uris = [after.uri, before.uri];
    await this.storageWatch?.admit(uris);
    const permit = await this.admission.acquire(this.cost('change', 'tif', grid.size), signal);
    return this.#run(
      permit,
      uris,
      this.#changeRaster(after, before, grid).then((change) => readChange(change, grid.size)),
    );
  }

  /**
   * One DSM's heights on any grid (a map tile's, grown by a pixel for shading: height-tiles),
   * warped exactly as a DetailDsm download is, with the admission of a heights GeoTIFF that size.
   */
  async heightsOn(dsm: OpenableAsset, grid: AoiGrid, signal?: AbortSignal): Promise<Float32Array> {
    const uris = [dsm.uri];
    await this.storageWatch?.admit(uris);
    const permit = await this.admission.acquire(this.cost('elevation', 'tif', grid.size), signal);
    return this.#run(permit, uris, this.#heightsOn(dsm, grid));
  }

  async #heightsOn(dsm: OpenableAsset, grid: AoiGrid): Promise<Float32Array> {
    const source = await this.#open(dsm, grid);
    try {
      return await heightsOnGrid(source, grid, this.tuning);
    } finally {
      source.close();
    }
  }

  /**
   * The heights a DSM spans, from the smallest overview of its (low) COG: a few thousand pixels
   * read, so a map layer can spread one colour ramp over the whole survey instead of over each
   * tile (which would seam). Undefined when it holds no height.
   */
  async heightRangeOf(dsm: Pick<OpenableAsset, 'uri'>): Promise<HeightRange | undefined> {
    const uris = [dsm.uri];
    await this.storageWatch?.admit(uris);
    const permit = await this.admission.acquire(RENDER_OVERHEAD_BYTES);
    return this.#run(permit, uris, this.#heightRangeOf(dsm.uri));
  }

  async #heightRangeOf(uri: string): Promise<HeightRange | undefined> {
    const dataset = await gdal.openAsync(this.#storage.gdalPath(uri));
    try {
      const band = await dataset.bands.getAsync(1);
      const overviews = band.overviews.count();
      const smallest = overviews > 0 ? band.overviews.get(overviews - 1) : band;
      // Read, not GDAL's statistics: those would be saved beside the stored file (.aux.xml).
      const { x, y } = smallest.size;
      const heights = await smallest.pixels.readAsync(0, 0, x, y, new Float32Array(x * y));
      return validRange(heights);
    } finally {
      dataset.close();
    }
  }

  async #changeRaster(
    after: OpenableAsset,
    before: OpenableAsset,
    grid: AoiGrid,
    threshold?: number,
  ): Promise<ChangeRaster> {
    const opened = await Promise.allSettled([this.#open(after, grid), this.#open(before, grid)]);
    try {
      const [afterSource, beforeSource] = opened.map((result) => {
        if (result.status === 'rejected') throw result.reason;
        return result.value;
      }) as [gdal.Dataset, gdal.Dataset];
      return await changeRaster(afterSource, beforeSource, grid, this.tuning, threshold);
    } finally {
      for (const result of opened) if (result.status === 'fulfilled') result.value.close();
    }
  }

  /**
   * What a failed render is answered with. GDAL reads remote files itself, and when the storage
   * goes away mid-render it fails a read with a message that names nothing (or nothing at all):
   * if the storage does not answer now either, that is the cause, and the request gets
   * STORAGE_UNAVAILABLE (503, Retry-After) instead of a 500; the log keeps GDAL's words. With the
   * storage watch, "answer" means reading a byte of the render's own files.
   */
  async #blame(error: unknown, uris: string[]): Promise<unknown> {
    if (error instanceof NadirError) return error;
    if (this.storageWatch) return (await this.storageWatch.blame(uris, error)) ?? error;
    try {
      await this.#storage.ping();
    } catch (cause) {
      const reason = error instanceof Error && error.message ? error.message : 'a read failed';
      return storageUnavailable(uris.join(', '), new Error(`${reason}; storage: ${(cause as Error).message}`));
    }
    return error;
  }

  /**
   * The asset's pixels over the grid as one dataset GDAL warps from: its COG, or for a sharded
   * asset the low COG or a mosaic (an anonymous in-memory VRT) of the shards the grid touches.
   */
  async #open(asset: OpenableAsset, grid: AoiGrid): Promise<gdal.Dataset> {
    const { uri } = asset;
    const files = filesForBox(asset, grid.bounds, grid.pixelWidth);
    // No shard under the AOI: the low COG covers the survey and holds nothing there either.
    const uris = files.length === 0 ? [uri] : files;
    const paths = uris.map((uri) => this.#storage.gdalPath(uri));
    const open = () => (paths.length === 1 ? gdal.openAsync(paths[0] as string) : gdal.buildVRTAsync('', paths));
    try {
      return await open();
    } catch (error) {
      // GDAL remembers a file it could not reach during an outage as missing; if the store reads
      // it now, that memory is stale: forget it and open again.
      if (!this.storageWatch || (await this.storageWatch.blame(uris, error)) !== undefined) {
        throw storageUnavailable(uris.join(', '), error);
      }
      for (const path of paths) forgetRemoteFiles(path);
      try {
        return await open();
      } catch (again) {
        throw storageUnavailable(uris.join(', '), again);
      }
    }
  }

  async #render(
    asset: RenderRequest['asset'],
    grid: AoiGrid,
    aoi: Aoi,
    format: ImageFormat,
    checkEmpty: boolean,
  ): Promise<{ body: Buffer; heightRange?: HeightRange; empty: boolean }> {
    const scratch = new Scratch();
    const source = await this.#open(asset, grid);
    try {
      if (asset.kind === 'rgb') {
        return await renderImagery(source, grid, format, this.tuning, this.encoding, scratch, checkEmpty);
      }
      if (format === 'tif') {
        const path = scratch.path('heights.tif');
        await warpToGeoTiff(source, grid, 'elevation', this.tuning, path);
        const empty = checkEmpty && !(await fileHoldsSurveyPixels(path, 'elevation'));
        return { body: scratch.take('heights.tif'), empty };
      }
      const picture = await renderDsmPicture(source, grid, aoi.lat, format, this.tuning, this.encoding, scratch);
      return { body: picture.body, heightRange: picture.range, empty: picture.range === undefined };
    } finally {
      source.close();
      await scratch.releaseAll();
    }
  }
}
