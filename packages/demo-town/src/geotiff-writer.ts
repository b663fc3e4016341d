/**
 * Writes the demo rasters as tiled, lightly compressed GeoTIFFs through gdal-async's async
 * API. Files are written under a temporary name and renamed when complete, so a crashed run
 * never leaves a half-written file under the final name. Strips are double-buffered: the
 * caller renders the next strip while GDAL is still taking the previous one.
 */
import { rename, rm } from 'node:fs/promises';
import gdal from 'gdal-async';
import { DEMO_LOCATION, TOWN_ORIGIN_UTM } from './geo.js';
import { DSM_NODATA, type PixelGrid, type RasterKind, type StripSink } from './raster-output.js';

export class GeoTiffWriter implements StripSink {
  private inFlight: Promise<void> = Promise.resolve();

  private constructor(
    private readonly dataset: gdal.Dataset,
    private readonly bands: gdal.RasterBand[],
    private readonly tempPath: string,
    private readonly finalPath: string,
  ) {}

  static async create(path: string, grid: PixelGrid, kind: RasterKind): Promise<GeoTiffWriter> {
    const tempPath = `${path}.partial.tif`;
    await rm(tempPath, { force: true });
    const options = [
      'TILED=YES',
      'BLOCKXSIZE=256',
      'BLOCKYSIZE=256',
      'COMPRESS=DEFLATE',
      'ZLEVEL=1',
      'BIGTIFF=IF_SAFER',
    ];
    if (kind === 'rgba') options.push('PHOTOMETRIC=RGB', 'ALPHA=YES');
    const driver = gdal.drivers.get('GTiff');
    const bandCount = kind === 'rgba' ? 4 : 1;
    const type = kind === 'rgba' ? gdal.GDT_Byte : gdal.GDT_Float32;
    const dataset = await driver.createAsync(tempPath, grid.width, grid.height, bandCount, type, options);
    dataset.srs = gdal.SpatialReference.fromEPSG(DEMO_LOCATION.epsg);
    dataset.geoTransform = [
      roundMicro(TOWN_ORIGIN_UTM.easting + grid.minX),
      grid.gsd,
      0,
      roundMicro(TOWN_ORIGIN_UTM.northing + grid.maxY),
      0,
      -grid.gsd,
    ];
    const bands: gdal.RasterBand[] = [];
    for (let b = 1; b <= bandCount; b++) bands.push(await dataset.bands.getAsync(b));
    if (kind === 'rgba') {
      bands[3]!.colorInterpretation = gdal.GCI_AlphaBand;
    } else {
      bands[0]!.noDataValue = DSM_NODATA;
    }
    return new GeoTiffWriter(dataset, bands, tempPath, path);
  }

  /**
   * Queue one block (one array per band). Resolves once the previously queued block has been
   * handed to GDAL, so at most two blocks are alive at a time and the caller must not reuse
   * `data` arrays: allocate fresh ones per block.
   */
  async write(x: number, y: number, width: number, height: number, data: (Uint8Array | Float32Array)[]): Promise<void> {
    const previous = this.inFlight;
    this.inFlight = previous.then(async () => {
      for (let b = 0; b < data.length; b++) await this.bands[b]!.pixels.writeAsync(x, y, width, height, data[b]);
    });
    await previous;
  }

  /** Flush, close and move into place. */
  async finish(): Promise<void> {
    await this.inFlight;
    await this.dataset.flushAsync();
    this.dataset.close();
    await rename(this.tempPath, this.finalPath);
  }

  /** Give up on the file: close it and delete the partial output. */
  async abandon(): Promise<void> {
    await this.inFlight.catch(() => undefined);
    try {
      this.dataset.close();
    } catch {
      // already closed
    }
    await rm(this.tempPath, { force: true });
  }
}

/** Geotransform origins are exact multiples of the GSD; strip float noise from the sum. */
function roundMicro(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
