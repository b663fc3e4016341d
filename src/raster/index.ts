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
export { scratchFoldersInUse } from './scratch.js';
export { DEFAULT_TUNING, type GdalTuning, type PixelKind } from './warp.js';
export { renderWorldFile } from './world-file.js';
