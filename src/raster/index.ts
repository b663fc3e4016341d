/** The imagery engine behind `/staticmap/v2/surveys/{surveyId}/{type}.{format}` (docs/imagery.md). */
export {
  AdmissionController,
  type AdmissionOptions,
  type AdmissionStats,
  type Permit,
} from './admission.js';
export { type AoiPixels, aoiPixels } from './aoi-pixels.js';
export { CHANGE_RAMP, type ChangeStop, changeColour, changeColourFile } from './change-ramp.js';
export { colourReliefFile, type HeightRange, type Rgb, rampColour, VIRIDIS } from './colour-ramp.js';
export {
  type ChangeFigures,
  type ChangeMass,
  type ChangeRaster,
  type ChangeTally,
  type HeightChange,
  heightsOnGrid,
  subtractInPlace,
} from './dsm-change.js';
export {
  type ChangeRenderRequest,
  type ChangeRenderResult,
  DEFAULT_ADMISSION,
  RasterEngine,
  type RasterEngineOptions,
  RENDER_OVERHEAD_BYTES,
  type RenderRequest,
  type RenderResult,
  workingBytesPerPixel,
} from './engine.js';
export {
  CONTENT_TYPE,
  IMAGE_FORMATS,
  type ImageFormat,
  isRasterFormat,
  isWorldFileFormat,
  RASTER_FORMATS,
  type RasterFormat,
  type RenderedFile,
  WORLD_FILE_FORMATS,
  WORLD_FILE_IMAGE,
  type WorldFileFormat,
} from './formats.js';
export { DEFAULT_ENCODING, type PictureEncoding } from './imagery.js';
export {
  boundRasterMemory,
  glibcMalloc,
  type MallocControl,
  type RasterMemorySettings,
  SERVE_GDAL_CACHE_MB,
  TrimWhenIdle,
} from './memory.js';
export { scratchFoldersInUse } from './scratch.js';
export {
  isNoAnswer,
  ProbeTimeout,
  type StorageState,
  StorageWatch,
  SYSTEM_TIMERS,
  type Timers,
} from './storage-watch.js';
export { DEFAULT_TUNING, type GdalTuning, type PixelKind } from './warp.js';
export { renderWorldFile } from './world-file.js';
