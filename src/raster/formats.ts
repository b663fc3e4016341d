/** The `{format}` values of `/staticmap/v2/surveys/{surveyId}/{type}.{format}` (spec: "Retrieve imagery"). */
export const IMAGE_FORMATS = ['tif', 'jpg', 'png'] as const;
export const WORLD_FILE_FORMATS = ['jgw', 'pgw', 'tfw'] as const;
export const RASTER_FORMATS = [...IMAGE_FORMATS, ...WORLD_FILE_FORMATS] as const;

export type ImageFormat = (typeof IMAGE_FORMATS)[number];
export type WorldFileFormat = (typeof WORLD_FILE_FORMATS)[number];
export type RasterFormat = (typeof RASTER_FORMATS)[number];

export function isRasterFormat(value: string): value is RasterFormat {
  return (RASTER_FORMATS as readonly string[]).includes(value);
}

export function isWorldFileFormat(format: RasterFormat): format is WorldFileFormat {
  return (WORLD_FILE_FORMATS as readonly string[]).includes(format);
}

/** Which image a world file describes: jgw -> jpg, pgw -> png, tfw -> tif. */
export const WORLD_FILE_IMAGE: Record<WorldFileFormat, ImageFormat> = { jgw: 'jpg', pgw: 'png', tfw: 'tif' };

/** decisions.md, "Imagery": exact Content-Type values. */
export const CONTENT_TYPE: Record<RasterFormat, string> = {
  tif: 'image/tiff',
  jpg: 'image/jpeg',
  png: 'image/png',
  jgw: 'text/plain',
  pgw: 'text/plain',
  tfw: 'text/plain',
};

/** One downloadable file: what the HTTP route sends as the body of a 200. */
export interface RenderedFile {
  body: Buffer;
  contentType: string;
  /** Without the dot, e.g. `tif`; for Content-Disposition file names. */
  fileExtension: RasterFormat;
}
