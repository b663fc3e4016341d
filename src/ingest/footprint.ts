import gdal from 'gdal-async';
import type { MultiPolygon, Ring } from '../geo/polygon.js';
import { mercatorToLonLat } from '../geo/web-mercator.js';

// Polygonising a level of at most this many pixels across keeps the footprint to a few
// hundred vertices while staying within a couple of full-resolution tiles of the truth.
export const MAX_FOOTPRINT_PIXELS = 1024;

/**
 * The WGS84 outline of a COG's valid pixels (its mask, or nodata for elevation), traced on the
 * overview level closest to MAX_FOOTPRINT_PIXELS wide and simplified by one pixel of that level.
 */
export async function traceFootprint(cogPath: string): Promise<MultiPolygon> {
  const ds = await gdal.openAsync(cogPath);
  const memory = gdal.open('footprint', 'w', 'Memory');
  try {
    const band = ds.bands.get(1);
    const overviews = Array.from({ length: band.overviews.count() }, (_, i) => band.overviews.get(i));
    const levels = [band, ...overviews].filter((b): b is gdal.RasterBand => b !== null);
    const level = levels.find((b) => Math.max(b.size.x, b.size.y) <= MAX_FOOTPRINT_PIXELS) ?? levels.at(-1) ?? band;
    const mask = await georeferencedMask(ds, level);
    const layer = memory.layers.create('footprint', ds.srs, gdal.wkbPolygon);
    layer.fields.add(new gdal.FieldDefn('valid', gdal.OFTInteger));
    const maskBand = mask.bands.get(1);
    await gdal.polygonizeAsync({ src: maskBand, dst: layer, mask: maskBand, pixValField: 0, connectedness: 8 });
    const pixel = Math.abs((mask.geoTransform as number[])[1] as number);
    mask.close();

    const parts = new gdal.MultiPolygon();
    for (const feature of layer.features) {
      const geometry = feature.getGeometry();
      if (geometry) parts.children.add(geometry as gdal.Polygon);
    }
    if (parts.children.count() === 0) return [];
    const merged = parts.unionCascaded().simplifyPreserveTopology(pixel);
    return toLonLatMultiPolygon(merged);
  } finally {
    memory.close();
    ds.close();
  }
}

/**
 * An overview band has no geotransform of its own (polygonising it yields pixel coordinates),
 * so its mask is copied into an in-memory raster that carries the level's geotransform.
 */
async function georeferencedMask(ds: gdal.Dataset, level: gdal.RasterBand): Promise<gdal.Dataset> {
  const source = level.getMaskBand();
  if (!source) throw new Error('the COG has no mask band');
  const { x: width, y: height } = level.size;
  const pixels = await source.pixels.readAsync(0, 0, width, height, new Uint8Array(width * height));
  const gt = ds.geoTransform as number[];
  const scale = ds.rasterSize.x / width;
  const mask = gdal.open('', 'w', 'MEM', width, height, 1, 'Byte');
  mask.geoTransform = [gt[0] as number, (gt[1] as number) * scale, 0, gt[3] as number, 0, (gt[5] as number) * scale];
  await mask.bands.get(1).pixels.writeAsync(0, 0, width, height, pixels);
  return mask;
}

function toLonLatMultiPolygon(geometry: gdal.Geometry): MultiPolygon {
  const json = JSON.parse(geometry.toJSON()) as { type: string; coordinates: unknown };
  const polygons =
    json.type === 'Polygon'
      ? [json.coordinates as number[][][]]
      : json.type === 'MultiPolygon'
        ? (json.coordinates as number[][][][])
        : [];
  return polygons
    .filter((rings) => rings.length > 0)
    .map((rings) => rings.map((ring) => ring.map(([x, y]) => mercatorToLonLat(x as number, y as number)) as Ring));
}

/** One footprint for the survey: the union of its assets' footprints. */
export function unionFootprints(footprints: MultiPolygon[]): MultiPolygon {
  const parts = new gdal.MultiPolygon();
  for (const footprint of footprints) {
    for (const polygon of footprint) {
      parts.children.add(gdal.Geometry.fromGeoJson({ type: 'Polygon', coordinates: polygon }) as gdal.Polygon);
    }
  }
  if (parts.children.count() === 0) return [];
  const json = JSON.parse(parts.unionCascaded().toJSON()) as { type: string; coordinates: unknown };
  if (json.type === 'Polygon') return [json.coordinates as MultiPolygon[number]];
  return json.type === 'MultiPolygon' ? (json.coordinates as MultiPolygon) : [];
}
