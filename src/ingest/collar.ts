import { rm, writeFile } from 'node:fs/promises';
import gdal from 'gdal-async';
import type { SourceRaster } from './source.js';

/**
 * Many orthophotos (OpenDroneMap's float RGB among them) fill the area outside the flight with
 * black instead of declaring it. Like GDAL's `nearblack`, only near-black pixels connected to the
 * image edge are taken as "no data", so dark roofs and shadows inside the image stay data.
 *
 * Bounded memory: the raster is processed in strips of 256 rows. Each strip is flood-filled on
 * its own, seeded from the image border and from the collar pixels of the neighbouring strip's
 * boundary row; the per-pixel state lives in a temporary tiled GeoTIFF on disk, and only the first
 * and last row of every strip stay in memory. A pass goes down the strips, the next one up, and
 * so on while a pass still finds collar pixels crossing a strip boundary (a strip without new
 * seeds is not read again). Converged, the result is exactly the whole-raster flood fill; a collar
 * shape winding up and down more than MAX_PASSES times would keep its far end as data (never the
 * other way round: every masked pixel is connected to the border).
 */

// On a 0..255 scale: JPEG-compressed collars are rarely exactly 0.
const NEAR_BLACK = 8;
export const STRIP_ROWS = 256;
const MAX_PASSES = 32;

/** Bits of the per-pixel state. */
const DARK = 1;
const COLLAR = 2;
const NODATA = 4;

/** The state raster as an alpha band: 0 where the collar or declared nodata is, else 255. */
const STATE_TO_ALPHA = '0:255,1:255,2:0,3:0,4:0,5:0,6:0,7:0';

type PixelArray = Uint8Array | Uint16Array | Float32Array | Float64Array;

function pixelBuffer(dataType: string, length: number): PixelArray {
  if (dataType === 'Byte') return new Uint8Array(length);
  if (dataType === 'UInt16') return new Uint16Array(length);
  // Float64 (and 32-bit integers) keep full precision, so nodata compares exactly.
  if (dataType === 'Float32' || dataType === 'Int16' || dataType === 'Int8') return new Float32Array(length);
  return new Float64Array(length);
}

/** Reads one strip of the colour bands and marks DARK (and NODATA) pixels in `state`. */
async function classifyStrip(
  bands: gdal.RasterBand[],
  source: SourceRaster,
  y0: number,
  rows: number,
  state: Uint8Array,
): Promise<void> {
  const { width } = source;
  const threshold = NEAR_BLACK * ((source.scaleToByte?.max ?? 255) / 255);
  const nodata = source.nodata;
  const n = width * rows;
  const strips = await Promise.all(
    bands.map((band) => band.pixels.readAsync(0, y0, width, rows, pixelBuffer(source.dataType, n))),
  );
  const first = strips[0] as PixelArray;
  for (let i = 0; i < n; i++) {
    let dark = true;
    for (const strip of strips) {
      const v = strip[i] as number;
      // Declared nodata also lets the fill pass: it is not data either.
      if (v > threshold && v !== nodata) {
        dark = false;
        break;
      }
    }
    state[i] = (dark ? DARK : 0) | (nodata !== undefined && first[i] === nodata ? NODATA : 0);
  }
}

/**
 * Floods COLLAR over DARK pixels 4-connected to the given seeds, inside one strip of `rows` rows.
 * Seeds that are not DARK, or already COLLAR, are skipped. Returns how many pixels it marked.
 */
export function floodStrip(state: Uint8Array, width: number, rows: number, seeds: Iterable<number>): number {
  const stack = new Int32Array(width * rows);
  let top = 0;
  let count = 0;
  const push = (i: number) => {
    if (((state[i] as number) & (DARK | COLLAR)) === DARK) {
      state[i] = (state[i] as number) | COLLAR;
      stack[top++] = i;
      count++;
    }
  };
  for (const i of seeds) push(i);
  const last = (rows - 1) * width;
  while (top > 0) {
    const i = stack[--top] as number;
    const x = i % width;
    if (x > 0) push(i - 1);
    if (x < width - 1) push(i + 1);
    if (i >= width) push(i - width);
    if (i < last) push(i + width);
  }
  return count;
}

/** Row `row` of a strip: the indices whose pixel is DARK and whose neighbour in `other` is COLLAR. */
function* boundarySeeds(other: Uint8Array | undefined, edge: Uint8Array, row: number, width: number) {
  if (!other) return;
  for (let x = 0; x < width; x++) {
    if ((other[x] as number) & COLLAR && ((edge[x] as number) & (DARK | COLLAR)) === DARK) yield row * width + x;
  }
}

function* borderSeeds(width: number, rows: number, top: boolean, bottom: boolean) {
  for (let y = 0; y < rows; y++) {
    yield y * width;
    yield y * width + width - 1;
  }
  if (top) for (let x = 0; x < width; x++) yield x;
  if (bottom) for (let x = 0; x < width; x++) yield (rows - 1) * width + x;
}

interface StripEdges {
  first: Uint8Array;
  last: Uint8Array;
}

/**
 * Classifies the whole raster into `statePath` (a tiled Byte GeoTIFF of DARK/COLLAR/NODATA bits)
 * strip by strip and floods the collar. Returns how many pixels are collar.
 */
export async function computeCollarState(
  source: SourceRaster,
  statePath: string,
  progress: (fraction: number) => void = () => {},
): Promise<number> {
  const { width, height } = source;
  const ds = await gdal.openAsync(source.path);
  const out = await gdal.openAsync(statePath, 'w', 'GTiff', width, height, 1, 'Byte', [
    'TILED=YES',
    `BLOCKXSIZE=256`,
    `BLOCKYSIZE=${STRIP_ROWS}`,
    'COMPRESS=ZSTD',
    'ZSTD_LEVEL=1',
    'BIGTIFF=IF_SAFER',
  ]);
  try {
    // Band handles first: gdal-async blocks when a sync call meets a read still in flight.
    const bands = source.bands.map((n) => ds.bands.get(n));
    const outBand = out.bands.get(1);
    const strips = Math.ceil(height / STRIP_ROWS);
    const rowsOf = (k: number) => Math.min(STRIP_ROWS, height - k * STRIP_ROWS);
    const edges: StripEdges[] = [];
    const buffer = new Uint8Array(width * STRIP_ROWS);
    let total = 0;

    // Pass 1, downwards: classify from the source, flood from the border and the strip above.
    for (let k = 0; k < strips; k++) {
      const rows = rowsOf(k);
      const state = buffer.subarray(0, width * rows);
      await classifyStrip(bands, source, k * STRIP_ROWS, rows, state);
      const firstRow = state.subarray(0, width);
      total += floodStrip(state, width, rows, [
        ...boundarySeeds(edges[k - 1]?.last, firstRow, 0, width),
        ...borderSeeds(width, rows, k === 0, k === strips - 1),
      ]);
      edges.push({ first: state.slice(0, width), last: state.slice((rows - 1) * width) });
      await outBand.pixels.writeAsync(0, k * STRIP_ROWS, width, rows, state);
      progress((k + 1) / strips);
    }

    // Further passes, alternately up and down, only through strips a neighbour hands new seeds.
    for (let pass = 2; pass <= MAX_PASSES; pass++) {
      const upwards = pass % 2 === 0;
      let added = 0;
      for (let j = 0; j < strips; j++) {
        const k = upwards ? strips - 1 - j : j;
        const rows = rowsOf(k);
        const edge = edges[k] as StripEdges;
        const seeds = upwards
          ? [...boundarySeeds(edges[k + 1]?.first, edge.last, rows - 1, width)]
          : [...boundarySeeds(edges[k - 1]?.last, edge.first, 0, width)];
        if (seeds.length === 0) continue;
        const state = buffer.subarray(0, width * rows);
        await outBand.pixels.readAsync(0, k * STRIP_ROWS, width, rows, state);
        const marked = floodStrip(state, width, rows, seeds);
        added += marked;
        edges[k] = { first: state.slice(0, width), last: state.slice((rows - 1) * width) };
        await outBand.pixels.writeAsync(0, k * STRIP_ROWS, width, rows, state);
      }
      total += added;
      if (added === 0) break;
    }
    await out.flushAsync();
    return total;
  } finally {
    out.close();
    ds.close();
  }
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * Finds the source's black collar and keeps the per-pixel state in `statePath`. False (and no
 * file) when there is none and the source can be used as it is.
 */
export async function findBlackCollar(
  source: SourceRaster,
  statePath: string,
  progress?: (fraction: number) => void,
): Promise<boolean> {
  if ((await computeCollarState(source, statePath, progress)) > 0) return true;
  await rm(statePath, { force: true });
  return false;
}

/**
 * A VRT (its XML, which GDAL opens as it is) of the source's colour bands plus an alpha band read
 * from the collar state at `statePath` (any path GDAL opens: a local file, /vsis3/...): 0 on the
 * collar and on declared nodata, 255 elsewhere.
 */
export async function collarVrt(source: Pick<SourceRaster, 'path' | 'bands'>, statePath: string): Promise<string> {
  const ds = await gdal.openAsync(source.path);
  try {
    const { x: width, y: height } = ds.rasterSize;
    const srcBands = source.bands.map((n, i) => {
      const interp = ['Red', 'Green', 'Blue'][i];
      const type = ds.bands.get(n).dataType;
      return `<VRTRasterBand dataType="${type}" band="${i + 1}"><ColorInterp>${interp}</ColorInterp>
  <SimpleSource><SourceFilename relativeToVRT="0">${escapeXml(source.path)}</SourceFilename><SourceBand>${n}</SourceBand></SimpleSource></VRTRasterBand>`;
    });
    return `<VRTDataset rasterXSize="${width}" rasterYSize="${height}">
<SRS>${escapeXml(ds.srs?.toWKT() ?? '')}</SRS>
<GeoTransform>${(ds.geoTransform ?? []).join(', ')}</GeoTransform>
${srcBands.join('\n')}
<VRTRasterBand dataType="Byte" band="${source.bands.length + 1}"><ColorInterp>Alpha</ColorInterp>
  <ComplexSource><SourceFilename relativeToVRT="0">${escapeXml(statePath)}</SourceFilename><SourceBand>1</SourceBand><LUT>${STATE_TO_ALPHA}</LUT></ComplexSource></VRTRasterBand>
</VRTDataset>`;
  } finally {
    ds.close();
  }
}

/**
 * When the source has a black collar, writes `<base>.collar.tif` (the per-pixel state) and
 * `<base>.vrt` (collarVrt). Returns the VRT's path, or undefined when there is no collar.
 */
export async function maskBlackCollar(
  source: SourceRaster,
  base: string,
  progress?: (fraction: number) => void,
): Promise<string | undefined> {
  const statePath = `${base}.collar.tif`;
  if (!(await findBlackCollar(source, statePath, progress))) return undefined;
  const vrtPath = `${base}.vrt`;
  await writeFile(vrtPath, await collarVrt(source, statePath));
  return vrtPath;
}
