import gdal from 'gdal-async';
import type { CogGrid } from '../geo/cog-grid.js';
import { MAX_ZOOM, ORIGIN_SHIFT, resolutionAtZoom, TILE_SIZE } from '../geo/web-mercator.js';
import type { SourceRaster } from './source.js';

/**
 * Imagery that is already what ingest would write: a COG in EPSG:3857 at a GoogleMapsCompatible
 * zoom's resolution, 256 x 256 YCbCr JPEG tiles, every level (full resolution and each overview,
 * halving exactly) starting on a map tile boundary. Re-warping it would decode and re-encode every
 * JPEG tile (a second JPEG generation, several DN off); its file is stored as it is instead, and
 * the tile service reads its blocks exactly as the producer compressed them.
 */

// Geotransform values are doubles printed and parsed by several tools: allow a thousandth of a pixel.
const PIXEL_EPSILON = 1e-3;

function near(value: number, target: number): boolean {
  return Math.abs(value - target) <= PIXEL_EPSILON;
}

/** The grid the source already is, when it qualifies; undefined otherwise (it is then warped). */
export async function alignedCogGrid(source: SourceRaster): Promise<CogGrid | undefined> {
  if (source.kind !== 'rgb' || source.dataType !== 'Byte' || source.scaleToByte) return undefined;
  // Exactly three colour bands, as nadir writes them; an alpha band would need turning into a mask.
  if (source.alphaBand || source.bands.join() !== '1,2,3') return undefined;
  const ds = await gdal.openAsync(source.path);
  try {
    if (ds.driver.description !== 'GTiff' || ds.bands.count() !== 3) return undefined;
    const structure = ds.getMetadata('IMAGE_STRUCTURE');
    if (structure.LAYOUT !== 'COG' || structure.COMPRESSION !== 'YCbCr JPEG') return undefined;
    if (structure.INTERLEAVE !== 'PIXEL') return undefined;
    if (!ds.srs?.isSame(gdal.SpatialReference.fromEPSG(3857))) return undefined;
    const gt = ds.geoTransform as [number, number, number, number, number, number] | null;
    if (gt?.[2] !== 0 || gt[4] !== 0) return undefined;
    const resolution = gt[1];
    if (!near(-gt[5] / resolution, 1)) return undefined;
    const zoom = Math.round(Math.log2(resolutionAtZoom(0) / resolution));
    if (zoom < 0 || zoom > MAX_ZOOM || !near(resolution / resolutionAtZoom(zoom), 1)) return undefined;

    const band = ds.bands.get(1);
    const { x: blockX, y: blockY } = band.blockSize;
    if (blockX !== TILE_SIZE || blockY !== TILE_SIZE) return undefined;
    // The mask, when there is one, must be an internal per-dataset mask (as GDAL's COG writes).
    if (band.getMaskFlags() !== 0x02 && band.getMaskFlags() !== 0x01) return undefined;

    const overviewCount = band.overviews.count();
    const { x: width, y: height } = ds.rasterSize;
    const factor = 2 ** overviewCount;
    if (width % (TILE_SIZE * factor) !== 0 || height % (TILE_SIZE * factor) !== 0) return undefined;
    for (let i = 0; i < overviewCount; i++) {
      const overview = band.overviews.get(i);
      const size = overview.size;
      const block = overview.blockSize;
      if (size.x !== width / 2 ** (i + 1) || size.y !== height / 2 ** (i + 1)) return undefined;
      if (block.x !== TILE_SIZE || block.y !== TILE_SIZE) return undefined;
    }

    // The corner, in tiles of the coarsest level, must be whole numbers.
    const coarseSpan = TILE_SIZE * resolution * factor;
    const cornerX = (gt[0] + ORIGIN_SHIFT) / coarseSpan;
    const cornerY = (ORIGIN_SHIFT - gt[3]) / coarseSpan;
    // Off by at most PIXEL_EPSILON full-resolution pixels.
    const pixelsOff = (tiles: number) => Math.abs(tiles - Math.round(tiles)) * TILE_SIZE * factor;
    if (pixelsOff(cornerX) > PIXEL_EPSILON || pixelsOff(cornerY) > PIXEL_EPSILON) return undefined;

    const tileSpan = TILE_SIZE * resolution;
    const tileX = Math.round(cornerX) * factor;
    const tileY = Math.round(cornerY) * factor;
    const minX = -ORIGIN_SHIFT + tileX * tileSpan;
    const maxY = ORIGIN_SHIFT - tileY * tileSpan;
    return {
      zoom,
      minZoom: zoom - overviewCount,
      overviewCount,
      resolution: resolutionAtZoom(zoom),
      tileX,
      tileY,
      width,
      height,
      bounds: { minX, maxY, maxX: minX + width * resolution, minY: maxY - height * resolution },
    };
  } finally {
    ds.close();
  }
}
