import gdal from 'gdal-async';

export interface Raster {
  width: number;
  height: number;
  bands: Float64Array[];
  /** 255 where the dataset says there is data. */
  mask: Uint8Array;
}

/** Reads every band and the dataset mask (alpha band, internal mask or nodata) at full resolution. */
export async function readRaster(path: string, bandNumbers?: number[]): Promise<Raster> {
  const ds = await gdal.openAsync(path);
  try {
    const { x: width, y: height } = ds.rasterSize;
    const numbers = bandNumbers ?? Array.from({ length: ds.bands.count() }, (_, i) => i + 1);
    const handles = numbers.map((n) => ds.bands.get(n));
    const maskBand = handles[0]?.getMaskBand();
    const bands: Float64Array[] = [];
    for (const band of handles)
      bands.push(await band.pixels.readAsync(0, 0, width, height, new Float64Array(width * height)));
    const mask = maskBand
      ? await maskBand.pixels.readAsync(0, 0, width, height, new Uint8Array(width * height))
      : new Uint8Array(width * height).fill(255);
    return { width, height, bands, mask };
  } finally {
    ds.close();
  }
}
