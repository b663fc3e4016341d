/**
 * GDAL's own words for a source that cannot be read whole. GDAL's multi-threaded warper meets a
 * read error (a truncated GeoTIFF's "TIFFReadEncodedStrip() failed") on one of its threads, and
 * the call fails on ours with an empty message: the error text is thread-local. Reading the
 * sources again block by block on this thread finds the block and GDAL's message. It reads every
 * block of every source, so it runs only after a job has failed without a message.
 */
import gdal from 'gdal-async';

/** `path, band B, block (X, Y): GDAL's message` for the first block that fails, or undefined. */
export async function firstReadError(paths: readonly string[]): Promise<string | undefined> {
  for (const path of paths) {
    let ds: gdal.Dataset;
    try {
      ds = await gdal.openAsync(path);
    } catch (error) {
      return `${path}: ${(error as Error).message}`;
    }
    try {
      const found = await firstBadBlock(ds);
      if (found) return `${path}, ${found}`;
    } finally {
      ds.close();
    }
  }
  return undefined;
}

async function firstBadBlock(ds: gdal.Dataset): Promise<string | undefined> {
  const { x: width, y: height } = ds.rasterSize;
  for (let n = 1; n <= ds.bands.count(); n++) {
    const band = ds.bands.get(n);
    const { x: blockWidth, y: blockHeight } = band.blockSize;
    for (let row = 0; row < Math.ceil(height / blockHeight); row++) {
      for (let column = 0; column < Math.ceil(width / blockWidth); column++) {
        try {
          await band.pixels.readBlockAsync(column, row);
        } catch (error) {
          const message = (error as Error).message || 'unreadable';
          return `band ${n}, block at pixel (${column * blockWidth}, ${row * blockHeight}): ${message}`;
        }
      }
    }
  }
  return undefined;
}
