import { randomUUID } from 'node:crypto';
import gdal from 'gdal-async';

/** Every request's in-memory files live under here, so leaks are easy to see (and test). */
export const SCRATCH_ROOT = '/vsimem/nadir-raster';

/**
 * One request's /vsimem folder. GDAL writes files we never asked for (a PAM `.aux.xml` beside a
 * PNG or JPEG holding the CRS those formats cannot), so cleanup lists the folder and releases
 * whatever is there instead of trusting a list of names.
 */
export class Scratch {
  readonly dir = `${SCRATCH_ROOT}/${randomUUID()}`;

  path(name: string): string {
    return `${this.dir}/${name}`;
  }

  /** Puts bytes into a scratch file (GDAL reads it in place; the Buffer must outlive its use). */
  write(name: string, data: Buffer): string {
    const path = this.path(name);
    gdal.vsimem.set(data, path);
    return path;
  }

  /**
   * Takes a finished file out of /vsimem as a Buffer without copying (GDAL hands over its memory).
   * Every dataset writing it must be closed first.
   */
  take(name: string): Buffer {
    return gdal.vsimem.release(this.path(name));
  }

  /** Frees whatever is left. Never throws: it runs in `finally` blocks. */
  async releaseAll(): Promise<void> {
    let names: string[];
    try {
      names = await gdal.fs.readDirAsync(this.dir);
    } catch {
      return; // nothing was ever written here
    }
    for (const name of names) {
      try {
        gdal.vsimem.release(this.path(name));
      } catch {
        // Already released, or a name GDAL lists but holds no file for (e.g. "." entries).
      }
    }
  }
}

/** Names of request folders still in /vsimem: empty when no render is running. */
export async function scratchFoldersInUse(): Promise<string[]> {
  try {
    return await gdal.fs.readDirAsync(SCRATCH_ROOT);
  } catch {
    return [];
  }
}
