import { writeFile } from 'node:fs/promises';
import gdal from 'gdal-async';
import type { SourceRaster } from './source.js';

/**
 * Many orthophotos (OpenDroneMap's float RGB among them) fill the area outside the flight with
 * black instead of declaring it. Like GDAL's `nearblack`, only near-black pixels connected to the
 * image edge are taken as "no data", so dark roofs and shadows inside the image stay data.
 */

// On a 0..255 scale: JPEG-compressed collars are rarely exactly 0.
const NEAR_BLACK = 8;
const STRIP_ROWS = 256;

const DARK = 1;
const COLLAR = 2;

async function classifyPixels(ds: gdal.Dataset, source: SourceRaster): Promise<Uint8Array> {
  const { width, height } = source;
  const threshold = NEAR_BLACK * ((source.scaleToByte?.max ?? 255) / 255);
  const state = new Uint8Array(width * height);
  // Band handles first: gdal-async blocks when a sync call meets a read still in flight.
  const bands = source.bands.map((n) => ds.bands.get(n));
  for (let y0 = 0; y0 < height; y0 += STRIP_ROWS) {
    const rows = Math.min(STRIP_ROWS, height - y0);
    const strips = await Promise.all(
      bands.map((band) => band.pixels.readAsync(0, y0, width, rows, new Float64Array(width * rows))),
    );
    const offset = y0 * width;
    for (let i = 0; i < width * rows; i++) {
      let dark = true;
      for (const strip of strips) {
        const v = strip[i] as number;
        // Declared nodata also lets the fill pass: it is not data either.
        if (v > threshold && v !== source.nodata) {
          dark = false;
          break;
        }
      }
      if (dark) state[offset + i] = DARK;
    }
  }
  return state;
}

/** Marks every DARK pixel 4-connected to the image border as COLLAR; returns how many. */
export function fillFromBorder(state: Uint8Array, width: number, height: number): number {
  const stack: number[] = [];
  const push = (i: number) => {
    if (state[i] === DARK) {
      state[i] = COLLAR;
      stack.push(i);
    }
  };
  for (let x = 0; x < width; x++) {
    push(x);
    push((height - 1) * width + x);
  }
  for (let y = 0; y < height; y++) {
    push(y * width);
    push(y * width + width - 1);
  }
  let count = 0;
  for (let i = stack.pop(); i !== undefined; i = stack.pop()) {
    count++;
    const x = i % width;
    if (x > 0) push(i - 1);
    if (x < width - 1) push(i + 1);
    if (i >= width) push(i - width);
    if (i < (height - 1) * width) push(i + width);
  }
  return count;
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * When the source has a black collar, writes `<base>.mask.tif` (255 = data) and `<base>.vrt`:
 * the source's colour bands plus that mask as an alpha band. Returns the VRT's path, or
 * undefined when there is no collar and the source can be used as it is.
 */
export async function maskBlackCollar(source: SourceRaster, base: string): Promise<string | undefined> {
  const ds = await gdal.openAsync(source.path);
  try {
    const { width, height } = source;
    const state = await classifyPixels(ds, source);
    if (fillFromBorder(state, width, height) === 0) return undefined;
    const alpha = new Uint8Array(width * height);
    for (let i = 0; i < alpha.length; i++) alpha[i] = state[i] === COLLAR ? 0 : 255;
    // Interior nodata pixels are not data either.
    if (source.nodata !== undefined) await clearNodata(ds, source, alpha);

    const maskPath = `${base}.mask.tif`;
    const mask = await gdal.openAsync(maskPath, 'w', 'GTiff', width, height, 1, 'Byte', [
      'COMPRESS=DEFLATE',
      'TILED=YES',
    ]);
    await mask.bands.get(1).pixels.writeAsync(0, 0, width, height, alpha);
    mask.close();

    const srcBands = source.bands.map((n, i) => {
      const interp = ['Red', 'Green', 'Blue'][i];
      const type = ds.bands.get(n).dataType;
      return `<VRTRasterBand dataType="${type}" band="${i + 1}"><ColorInterp>${interp}</ColorInterp>
  <SimpleSource><SourceFilename relativeToVRT="0">${escapeXml(source.path)}</SourceFilename><SourceBand>${n}</SourceBand></SimpleSource></VRTRasterBand>`;
    });
    const vrt = `<VRTDataset rasterXSize="${width}" rasterYSize="${height}">
<SRS>${escapeXml(ds.srs?.toWKT() ?? '')}</SRS>
<GeoTransform>${(ds.geoTransform ?? []).join(', ')}</GeoTransform>
${srcBands.join('\n')}
<VRTRasterBand dataType="Byte" band="4"><ColorInterp>Alpha</ColorInterp>
  <SimpleSource><SourceFilename relativeToVRT="0">${escapeXml(maskPath)}</SourceFilename><SourceBand>1</SourceBand></SimpleSource></VRTRasterBand>
</VRTDataset>`;
    const vrtPath = `${base}.vrt`;
    await writeFile(vrtPath, vrt);
    return vrtPath;
  } finally {
    ds.close();
  }
}

async function clearNodata(ds: gdal.Dataset, source: SourceRaster, alpha: Uint8Array): Promise<void> {
  const { width, height } = source;
  const band = ds.bands.get(source.bands[0] as number);
  for (let y0 = 0; y0 < height; y0 += STRIP_ROWS) {
    const rows = Math.min(STRIP_ROWS, height - y0);
    const strip = await band.pixels.readAsync(0, y0, width, rows, new Float64Array(width * rows));
    for (let i = 0; i < strip.length; i++) if (strip[i] === source.nodata) alpha[y0 * width + i] = 0;
  }
}
