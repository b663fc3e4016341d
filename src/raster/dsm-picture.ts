import gdal from 'gdal-async';
import type { AoiGrid } from '../geo/aoi-grid.js';
import { colourReliefFile, type HeightRange } from './colour-ramp.js';
import { type PictureEncoding, writePicture } from './imagery.js';
import type { Scratch } from './scratch.js';
import { type GdalTuning, warpToMemory } from './warp.js';

/**
 * Shading never darkens a colour below this fraction, so steep faces keep their hue instead of
 * turning black. Flat ground is not darkened at all (see `hillshadeArguments`).
 */
const SHADE_FLOOR = 0.4;

/** Intermediate rasters in 256 x 256 tiles: a few hundred cache blocks instead of one per row. */
const TILED = ['-co', 'TILED=YES'];

export interface DsmPicture {
  body: Buffer;
  /** The heights the ramp spans: min and max of this AOI's valid pixels; undefined if it has none. */
  range: HeightRange | undefined;
}

/**
 * DetailDsm as a picture for people (jpg/png): a colour ramp spread over this AOI's own height
 * range, multiplied by a hillshade. Every per-pixel step is a GDAL operation run in gdal-async's
 * thread pool; the event loop only writes a few hundred bytes of text:
 *
 * 1. warp the heights onto the AOI grid (Float32, nodata -9999), as for the tif;
 * 2. exact min/max of the valid pixels (GDAL statistics, nodata skipped);
 * 3. `gdaldem color-relief` with a colour file spanning min..max, nodata transparent;
 * 4. `gdaldem hillshade`;
 * 5. a VRT whose bands are colour x shade (the built-in `mul` pixel function) plus the colour
 *    alpha, encoded to PNG (RGBA) or JPEG (RGB, no-data black as for imagery).
 */
export async function renderDsmPicture(
  source: gdal.Dataset,
  grid: AoiGrid,
  latitude: number,
  format: 'jpg' | 'png',
  tuning: GdalTuning,
  encoding: PictureEncoding,
  scratch: Scratch,
): Promise<DsmPicture> {
  const heights = await warpToMemory(source, grid, 'elevation', tuning);
  let range: HeightRange | undefined;
  try {
    range = await validRange(heights);
    scratch.write('ramp.txt', Buffer.from(colourReliefFile(range ?? { min: 0, max: 0 })));
    const rampFile = scratch.path('ramp.txt');
    await closeFlushed(
      gdal.demAsync(scratch.path('colour.tif'), heights, 'color-relief', ['-alpha', ...TILED], rampFile),
    );
    await closeFlushed(
      gdal.demAsync(scratch.path('shade.tif'), heights, 'hillshade', [...hillshadeArguments(latitude), ...TILED]),
    );
  } finally {
    heights.close();
  }
  scratch.write('picture.vrt', Buffer.from(compositeVrt(grid, scratch, format)));
  const composite = await gdal.openAsync(scratch.path('picture.vrt'));
  const name = `picture.${format}`;
  try {
    await writePicture(composite, format, encoding, scratch.path(name));
  } finally {
    composite.close();
  }
  return { body: scratch.take(name), range };
}

/**
 * Closes a GeoTIFF GDAL has just written, flushing its cached blocks in the thread pool first:
 * a plain close() would write them out on the event loop (measured: up to 90 ms at 3000 px).
 */
async function closeFlushed(opening: Promise<gdal.Dataset>): Promise<void> {
  const dataset = await opening;
  try {
    await dataset.flushAsync();
  } finally {
    dataset.close();
  }
}

/** Min and max of the valid heights, or undefined when the AOI has none. */
async function validRange(heights: gdal.Dataset): Promise<HeightRange | undefined> {
  const band = await heights.bands.getAsync(1);
  try {
    const stats = await band.computeStatisticsAsync(false);
    return Number.isFinite(stats.min) && Number.isFinite(stats.max) ? { min: stats.min, max: stats.max } : undefined;
  } catch {
    return undefined; // GDAL: "no valid pixels found"
  }
}

/**
 * gdaldem hillshade for heights in metres on an EPSG:3857 grid. A Mercator metre is cos(lat)
 * ground metres, so slopes are computed with z = 1 / cos(lat): true relief, no exaggeration.
 * Igor's method (as in Maperitive) leaves flat ground at full brightness and only darkens slopes
 * facing away from the light, which suits multiplying onto colours: the ramp's colours stay
 * true where the ground is level. `-compute_edges` shades the border and the pixels next to
 * nodata too, instead of leaving a dark seam.
 */
export function hillshadeArguments(latitude: number): string[] {
  const z = 1 / Math.cos((latitude * Math.PI) / 180);
  return ['-z', `${z}`, '-igor', '-compute_edges'];
}

function compositeVrt(grid: AoiGrid, scratch: Scratch, format: 'jpg' | 'png'): string {
  const colour = scratch.path('colour.tif');
  const shade = scratch.path('shade.tif');
  // Shade 0..255 (0 is the hillshade's nodata) mapped to SHADE_FLOOR..1 of 255 before multiplying.
  const offset = 255 * SHADE_FLOOR;
  const ratio = 1 - SHADE_FLOOR;
  const shaded = (band: number, name: string) => `
  <VRTRasterBand dataType="Byte" band="${band}" subClass="VRTDerivedRasterBand">
    <ColorInterp>${name}</ColorInterp>
    <PixelFunctionType>mul</PixelFunctionType>
    <PixelFunctionArguments k="${1 / 255}"/>
    <SimpleSource><SourceFilename relativeToVRT="0">${colour}</SourceFilename><SourceBand>${band}</SourceBand></SimpleSource>
    <ComplexSource>
      <SourceFilename relativeToVRT="0">${shade}</SourceFilename><SourceBand>1</SourceBand>
      <ScaleOffset>${offset}</ScaleOffset><ScaleRatio>${ratio}</ScaleRatio>
    </ComplexSource>
  </VRTRasterBand>`;
  const alpha = `
  <VRTRasterBand dataType="Byte" band="4">
    <ColorInterp>Alpha</ColorInterp>
    <SimpleSource><SourceFilename relativeToVRT="0">${colour}</SourceFilename><SourceBand>4</SourceBand></SimpleSource>
  </VRTRasterBand>`;
  return `<VRTDataset rasterXSize="${grid.size}" rasterYSize="${grid.size}">
  <SRS>EPSG:3857</SRS>
  <GeoTransform>${grid.geoTransform.join(', ')}</GeoTransform>${shaded(1, 'Red')}${shaded(2, 'Green')}${shaded(3, 'Blue')}${format === 'png' ? alpha : ''}
</VRTDataset>
`;
}
