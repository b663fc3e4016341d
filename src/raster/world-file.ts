import type { Aoi } from '../geo/aoi.js';
import { aoiGrid, worldFileText } from '../geo/aoi-grid.js';
import { CONTENT_TYPE, type RenderedFile, type WorldFileFormat } from './formats.js';

/**
 * The jgw / pgw / tfw of a request: pure arithmetic on (AOI, size), no pixels read. All three
 * describe the same grid, because the jpg, png and tif of one request share it.
 */
export function renderWorldFile(aoi: Aoi, size: number, format: WorldFileFormat): RenderedFile {
  return {
    body: Buffer.from(worldFileText(aoiGrid(aoi, size)), 'ascii'),
    contentType: CONTENT_TYPE[format],
    fileExtension: format,
  };
}
