/**
 * A GDAL VRT mosaicking the GeoTIFFs of an area grid (area-grid.ts) into one raster: each cell's
 * image placed at its offset on the finest cell's pixel grid (GDAL resamples the others). Written
 * as XML from the VRT format description (https://gdal.org/drivers/raster/vrt.html), so the client
 * needs no GDAL of its own; QGIS and gdal_translate open the result.
 */
import type { MercatorBox } from '../area-grid.js';
import type { RasterType } from '../types.js';

export interface VrtSource {
  /** Relative to the VRT's folder. */
  file: string;
  size: number;
  mercator: MercatorBox;
}

/** Band layout of the server's GeoTIFFs (docs/imagery.md): RGBA Byte, or one Float32 with nodata -9999. */
const LAYOUT = {
  photo: { type: 'Byte', bands: ['Red', 'Green', 'Blue', 'Alpha'], nodata: undefined },
  heights: { type: 'Float32', bands: ['Gray'], nodata: -9999 },
} as const;

const escapeXml = (text: string) =>
  text.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string,
  );

export function mosaicVrt(type: RasterType, extent: MercatorBox, sources: VrtSource[]): string {
  if (sources.length === 0) throw new RangeError('a VRT needs at least one source');
  const layout = type === 'DetailDsm' ? LAYOUT.heights : LAYOUT.photo;
  const pixel = Math.min(...sources.map((s) => (s.mercator.maxX - s.mercator.minX) / s.size));
  const width = Math.ceil((extent.maxX - extent.minX) / pixel - 1e-6);
  const height = Math.ceil((extent.maxY - extent.minY) / pixel - 1e-6);
  const bands = layout.bands.map((colour, index) => {
    const band = index + 1;
    const placed = sources.map((source) => {
      const x = (source.mercator.minX - extent.minX) / pixel;
      const y = (extent.maxY - source.mercator.maxY) / pixel;
      const w = (source.mercator.maxX - source.mercator.minX) / pixel;
      const h = (source.mercator.maxY - source.mercator.minY) / pixel;
      const kind = layout.nodata === undefined ? 'SimpleSource' : 'ComplexSource';
      return [
        `    <${kind}>`,
        `      <SourceFilename relativeToVRT="1">${escapeXml(source.file)}</SourceFilename>`,
        `      <SourceBand>${band}</SourceBand>`,
        `      <SrcRect xOff="0" yOff="0" xSize="${source.size}" ySize="${source.size}"/>`,
        `      <DstRect xOff="${x}" yOff="${y}" xSize="${w}" ySize="${h}"/>`,
        ...(layout.nodata === undefined ? [] : [`      <NODATA>${layout.nodata}</NODATA>`]),
        `    </${kind}>`,
      ].join('\n');
    });
    return [
      `  <VRTRasterBand dataType="${layout.type}" band="${band}">`,
      ...(layout.nodata === undefined ? [] : [`    <NoDataValue>${layout.nodata}</NoDataValue>`]),
      `    <ColorInterp>${colour}</ColorInterp>`,
      ...placed,
      '  </VRTRasterBand>',
    ].join('\n');
  });
  return [
    `<VRTDataset rasterXSize="${width}" rasterYSize="${height}">`,
    '  <SRS dataAxisToSRSAxisMapping="1,2">EPSG:3857</SRS>',
    `  <GeoTransform>${extent.minX}, ${pixel}, 0, ${extent.maxY}, 0, ${-pixel}</GeoTransform>`,
    ...bands,
    '</VRTDataset>',
    '',
  ].join('\n');
}
