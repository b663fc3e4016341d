/**
 * Reading the demo rasters back with GDAL, by map position: shared by the demo tests.
 * Synchronous GDAL calls throughout: tests do one thing at a time, and mixing sync and async
 * calls on a dataset makes gdal-async warn about blocking the event loop.
 */
import gdal from 'gdal-async';

export interface Raster {
  dataset: gdal.Dataset;
  geoTransform: number[];
  width: number;
  height: number;
}

export function openRaster(path: string): Raster {
  const dataset = gdal.open(path);
  const geoTransform = dataset.geoTransform;
  if (!geoTransform) throw new Error(`${path} has no geotransform`);
  return { dataset, geoTransform, width: dataset.rasterSize.x, height: dataset.rasterSize.y };
}

/** Pixel column/row containing UTM (easting, northing), or null outside the raster. */
export function pixelOf(raster: Raster, easting: number, northing: number): { col: number; row: number } | null {
  const [x0, dx, , y0, , dy] = raster.geoTransform as [number, number, number, number, number, number];
  const col = Math.floor((easting - x0) / dx);
  const row = Math.floor((northing - y0) / dy);
  if (col < 0 || row < 0 || col >= raster.width || row >= raster.height) return null;
  return { col, row };
}

/** All band values at a UTM position (null outside the raster). */
export function valuesAt(raster: Raster, easting: number, northing: number): number[] | null {
  const pixel = pixelOf(raster, easting, northing);
  if (!pixel) return null;
  const values: number[] = [];
  for (const band of raster.dataset.bands) values.push(band.pixels.get(pixel.col, pixel.row));
  return values;
}

/** Every band of the whole raster, for pixel-by-pixel comparisons. */
export function readAll(path: string): { bands: number[][]; geoTransform: number[] } {
  const raster = openRaster(path);
  const bands: number[][] = [];
  for (const band of raster.dataset.bands) {
    const data = band.pixels.read(0, 0, raster.width, raster.height);
    bands.push(Array.from(data as ArrayLike<number>));
  }
  raster.dataset.close();
  return { bands, geoTransform: raster.geoTransform };
}

/** WGS84 lon/lat to UTM 16N with GDAL (independent of the generator's own projection code). */
export function lonLatToUtmWithGdal(lon: number, lat: number): [number, number] {
  const wgs84 = gdal.SpatialReference.fromProj4('+proj=longlat +datum=WGS84 +no_defs');
  const utm = gdal.SpatialReference.fromEPSG(32616);
  const point = new gdal.CoordinateTransformation(wgs84, utm).transformPoint(lon, lat);
  return [point.x, point.y];
}

/**
 * Centroid (UTM) of the pixels in a window around a point that satisfy `match`, and how many.
 * `radius` is in metres; the window is a square.
 */
export function centroidOf(
  raster: Raster,
  centre: [number, number],
  radius: number,
  match: (r: number, g: number, b: number, a: number) => boolean,
): { easting: number; northing: number; count: number } {
  const [x0, dx, , y0, , dy] = raster.geoTransform as [number, number, number, number, number, number];
  const colFrom = Math.max(0, Math.floor((centre[0] - radius - x0) / dx));
  const colTo = Math.min(raster.width, Math.ceil((centre[0] + radius - x0) / dx));
  const rowFrom = Math.max(0, Math.floor((centre[1] + radius - y0) / dy));
  const rowTo = Math.min(raster.height, Math.ceil((centre[1] - radius - y0) / dy));
  const w = colTo - colFrom;
  const h = rowTo - rowFrom;
  const bands = [1, 2, 3, 4].map((b) => raster.dataset.bands.get(b).pixels.read(colFrom, rowFrom, w, h) as Uint8Array);
  const [r, g, b, a] = bands as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  let sumE = 0;
  let sumN = 0;
  let count = 0;
  for (let row = 0; row < h; row++) {
    for (let col = 0; col < w; col++) {
      const k = row * w + col;
      if (!match(r[k]!, g[k]!, b[k]!, a[k]!)) continue;
      sumE += x0 + (colFrom + col + 0.5) * dx;
      sumN += y0 + (rowFrom + row + 0.5) * dy;
      count++;
    }
  }
  return { easting: sumE / count, northing: sumN / count, count };
}
