/**
 * Downloading an area wider than one AOI: the area grid's cells each get their coverage call
 * (and so their own token and transaction), their images go to `cells/` named with the cell's
 * row and column, and for GeoTIFFs one VRT per survey and type mosaics that survey's cells.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pointParameter } from '../area.js';
import type { AreaGrid } from '../area-grid.js';
import type { NadirClient } from '../client.js';
import { type PlannedImage, planDownload } from '../plan.js';
import type { DateFilters } from '../query.js';
import type { RasterFormat, RasterType, Survey } from '../types.js';
import { type DownloadEvents, downloadImages } from './download.js';
import { mosaicVrt } from './vrt.js';

export const CELLS_FOLDER = 'cells';

export interface CellImage extends PlannedImage<RasterType> {
  row: number;
  column: number;
}

export interface AreaPlan {
  images: CellImage[];
  /** One per survey and type: `<captureDate>_<surveyId>_<type>_<lon>,<lat>_<rows>x<columns>cells.vrt` (GeoTIFFs only). */
  mosaics: { fileName: string; surveyId: string; type: RasterType; cells: number }[];
}

/** Asks coverage for every cell (newest survey first in each) and names each cell's images. */
export async function planArea(
  client: NadirClient,
  grid: AreaGrid,
  types: RasterType[],
  format: RasterFormat,
  filters: DateFilters & { latest?: boolean; signal?: AbortSignal } = {},
): Promise<AreaPlan> {
  const images: CellImage[] = [];
  for (const cell of grid.cells) {
    let surveys: Survey[] = [];
    const query = {
      aoi: cell.aoi,
      resources: types,
      filter: 'anyTypes' as const,
      limit: 1000,
      ...(filters.since === undefined ? {} : { since: filters.since }),
      ...(filters.until === undefined ? {} : { until: filters.until }),
      ...(filters.signal ? { signal: filters.signal } : {}),
    };
    for await (const survey of client.surveys(query)) surveys.push(survey);
    if (filters.latest) surveys = surveys.slice(0, 1);
    for (const image of planDownload(surveys, types, format, cell.aoi).images) {
      const fileName = image.fileName.replace(/\.(\w+)$/, `_r${cell.row}c${cell.column}.$1`);
      images.push({ ...image, fileName, row: cell.row, column: cell.column });
    }
  }
  const mosaics = new Map<string, AreaPlan['mosaics'][number]>();
  if (format === 'tif') {
    // The area in the name too, as the cells' names have theirs: another area's mosaic in the
    // same folder is another file. Its first cell's point and the grid's shape place it.
    const first = grid.cells[0]?.aoi;
    const area = first ? `_${pointParameter(first.point)}_${grid.rows}x${grid.columns}cells` : '';
    for (const image of images) {
      const fileName = `${image.captureDate ? `${image.captureDate}_` : ''}${image.surveyId}_${image.type}${area}.vrt`;
      const mosaic = mosaics.get(fileName) ?? { fileName, surveyId: image.surveyId, type: image.type, cells: 0 };
      mosaic.cells++;
      mosaics.set(fileName, mosaic);
    }
  }
  return { images, mosaics: [...mosaics.values()] };
}

/** Fetches the plan's images (cell by cell, each on its own token) and writes the VRTs. */
export async function downloadArea(
  client: NadirClient,
  grid: AreaGrid,
  plan: AreaPlan,
  dir: string,
  options: DownloadEvents & { signal?: AbortSignal; concurrency?: number } = {},
): Promise<void> {
  const cellsDir = join(dir, CELLS_FOLDER);
  for (const cell of grid.cells) {
    const images = plan.images.filter((image) => image.row === cell.row && image.column === cell.column);
    if (images.length > 0) await downloadImages(client, cell.aoi, images, cellsDir, options);
  }
  for (const mosaic of plan.mosaics) {
    const sources = plan.images
      .filter((image) => image.surveyId === mosaic.surveyId && image.type === mosaic.type)
      .map((image) => ({
        file: `${CELLS_FOLDER}/${image.fileName}`,
        size: image.size,
        mercator: (
          grid.cells.find((c) => c.row === image.row && c.column === image.column) as AreaGrid['cells'][number]
        ).mercator,
      }));
    await writeFile(join(dir, mosaic.fileName), mosaicVrt(mosaic.type, grid.mercator, sources));
  }
}
