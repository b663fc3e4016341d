/**
 * STAC data assets that GDAL (STACIT, /vsicurl/) opens as they are (issue 34, item 2). A raster of
 * nadir is an area of at most 200 m around a point, bought with a transaction token from the
 * coverage endpoint and billed once per token (decisions.md). So a search that carries a
 * `transactionToken` gets, in each item whose survey has pixels in the token's area, data assets
 * that are that area's download: the imagery URL with the token, point, radius and the native
 * size, and the projection of that image's own grid, so STACIT's mosaic puts every survey's file
 * where it belongs. Every file of the search is then one transaction: the one the token stands
 * for, billed at the first byte any of them sends (the imagery endpoint honours Range over the
 * rendered file, so GDAL's reads cost no more). Pure.
 */
import { RASTER_TYPES, type Survey } from '../catalogue/survey.js';
import type { Aoi } from '../geo/aoi.js';
import { aoiGrid, MAX_IMAGE_SIZE } from '../geo/aoi-grid.js';
import { aoiPixels } from '../raster/aoi-pixels.js';

type Json = Record<string, unknown>;

/** The token of a search and the area it was issued for (its claims). */
export interface AoiDownload {
  token: string;
  aoi: Aoi;
}

/** Pixels per side at the asset's own resolution: 2 x radius / gsd, as the spec's resolution rule. */
export function nativeSize(aoi: Aoi, gsd: number): number {
  return Math.min(MAX_IMAGE_SIZE, Math.max(1, Math.round((2 * aoi.radius) / gsd)));
}

/** The data assets of `survey` for the token's area: none where the survey has no pixels there. */
export function aoiDataAssets(base: string, survey: Survey, download: AoiDownload): Json {
  const assets: Json = {};
  const { aoi, token } = download;
  for (const type of RASTER_TYPES) {
    const asset = survey.assets[type];
    if (!asset || aoiPixels(aoi, survey, asset) === 'none') continue;
    const size = nativeSize(aoi, asset.gsd);
    const grid = aoiGrid(aoi, size);
    const query = new URLSearchParams({
      transactionToken: token,
      point: `${aoi.lon},${aoi.lat}`,
      radius: `${aoi.radius}`,
      size: `${size}x${size}`,
    });
    const [originX, pixelWidth, , originY, , pixelHeight] = grid.geoTransform;
    const { minX, minY, maxX, maxY } = grid.bounds;
    assets[type] = {
      title: `${type} of the transaction token's area`,
      description:
        `The token's area (${2 * aoi.radius} m square around ${aoi.lon},${aoi.lat}) at the survey's resolution, ` +
        "as one GeoTIFF. Opening it is the token's transaction, billed once however many files and reads.",
      href: `${base}/staticmap/v2/surveys/${survey.id}/${type}.tif?${query}`,
      type: 'image/tiff; application=geotiff',
      roles: ['data'],
      gsd: Math.round(grid.groundResolution * 1e6) / 1e6,
      'proj:code': 'EPSG:3857',
      // proj v1's name for it: GDAL's STACIT driver (3.6, Debian 12) reads only proj:epsg/wkt2/projjson.
      'proj:epsg': 3857,
      'proj:bbox': [minX, minY, maxX, maxY],
      'proj:shape': [size, size],
      'proj:transform': [pixelWidth, 0, originX, 0, pixelHeight, originY],
    };
  }
  return assets;
}
