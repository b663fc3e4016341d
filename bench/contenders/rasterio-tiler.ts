/**
 * rasterio_tiler.py (tiles rendered the way rio-tiler/TiTiler render them) under Debian's gunicorn:
 * N worker processes, each with the COG opened once, listening on loopback. Sync workers by default
 * (one request at a time per process, N processes for N cores); 'gthread' adds threads, which
 * help only while GDAL reads and encodes (rasterio releases the GIL there).
 *
 * gunicorn's sync workers close the connection after every answer (no keep-alive), so each request
 * pays a TCP connect on loopback; 'gthread' workers keep connections open, for comparison.
 */
import { delimiter, join } from 'node:path';
import {
  freePort,
  removeScratch,
  type Service,
  scratchDir,
  startGroup,
  stopGroup,
  waitForHttp,
} from '../load/processes.js';

export interface RasterioTilerOptions {
  cogPath: string;
  port?: number;
  /** gunicorn worker processes (default 2, one per core). */
  workers?: number;
  workerClass?: 'sync' | 'gthread';
  /** Threads per gthread worker (default 1), each with its own dataset handle. */
  threads?: number;
  /** JPEG quality (default 85, nadir's tiles). */
  quality?: number;
  /** GDAL_CACHEMAX per worker, MB (default: GDAL's own, 5% of RAM). */
  gdalCacheMb?: number;
  /** COGs for `mosaicUrl`, newest first: each fills what the ones before it left empty. */
  mosaic?: string[];
}

export interface RasterioTiler extends Service {
  url: string;
  tileUrl(z: number, x: number, y: number): string;
  /** The tile drawn from `options.mosaic`. */
  mosaicUrl(z: number, x: number, y: number, format: 'jpg' | 'png'): string;
}

export async function startRasterioTiler(options: RasterioTilerOptions): Promise<RasterioTiler> {
  const dir = await scratchDir('rasterio');
  const port = options.port ?? (await freePort());
  const args = ['--bind', `127.0.0.1:${port}`, '--workers', `${options.workers ?? 2}`];
  args.push('--worker-class', options.workerClass ?? 'sync', '--threads', `${options.threads ?? 1}`);
  args.push('--chdir', import.meta.dirname, '--graceful-timeout', '3', '--timeout', '120', '--log-level', 'warning');
  const env: NodeJS.ProcessEnv = {
    NADIR_TILER_COG: options.cogPath,
    NADIR_TILER_QUALITY: `${options.quality ?? 85}`,
    // No __pycache__ in the source tree.
    PYTHONDONTWRITEBYTECODE: '1',
    NADIR_TILER_MOSAIC: (options.mosaic ?? []).join(delimiter),
  };
  if (options.gdalCacheMb !== undefined) env.GDAL_CACHEMAX = `${options.gdalCacheMb}`;
  // /usr/bin/gunicorn runs Debian's python3, which has Debian's rasterio (a pyenv python would not).
  const started = startGroup('/usr/bin/gunicorn', [...args, 'rasterio_tiler:app'], join(dir, 'gunicorn.log'), env);
  const url = `http://127.0.0.1:${port}`;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopGroup(started.child);
    await removeScratch(dir);
  };
  try {
    await waitForHttp(`${url}/`, started);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    stop,
    tileUrl: (z, x, y) => `${url}/tiles/${z}/${x}/${y}.jpg`,
    mosaicUrl: (z, x, y, format) => `${url}/mosaic/${z}/${x}/${y}.${format}`,
  };
}
