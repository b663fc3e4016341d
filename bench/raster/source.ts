/**
 * The benchmark's survey: an ~8000 x 8000 px orthophoto at 7.5 cm and a 2000 x 2000 px DSM at
 * 30 cm over the same 600 m square, ingested with the real pipeline.
 *
 * The pixels are real: the USGS Colorado orthophoto (rio-tiler fixture, 383 x 232 px, fully
 * valid) repeated in a grid, so compression sees aerial texture (cars, roofs, shadows) rather
 * than a smooth upscale that compresses unrealistically well. The DSM is the mosaic's luminance
 * averaged to 30 cm and mapped to 270..290 m: a textured surface with 20 m of relief.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Survey } from '../../src/catalogue/survey.js';
import { systemClock } from '../../src/cli/system-clock.js';
import { createServices } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { LocalStorage } from '../../src/storage/local-storage.js';
import { assetPaths } from '../asset-dataset.js';

const run = promisify(execFile);

export const SOURCE_TILE = join(import.meta.dirname, '../../../shared/realdata/rio-tiler/cog_rgb.tif');
/** UTM 16N (Wisconsin): the mosaic's upper-left corner, 7.5 cm pixels. */
const ORIGIN = { x: 296000, y: 4889000, epsg: 32616 };
const ORTHO_PIXEL = 0.075;
const ORTHO_SIZE = 8000;
const DSM_SIZE = 2000;
const TILE = { width: 383, height: 232 };

export interface BenchSurvey {
  survey: Survey;
  /** Centre of the square, WGS84. */
  centre: { lon: number; lat: number };
}

/** A VRT repeating the tile over ORTHO_SIZE x ORTHO_SIZE pixels (the last row and column cropped). */
function mosaicVrt(): string {
  const sources: string[] = [];
  for (let y = 0; y < ORTHO_SIZE; y += TILE.height) {
    for (let x = 0; x < ORTHO_SIZE; x += TILE.width) {
      const w = Math.min(TILE.width, ORTHO_SIZE - x);
      const h = Math.min(TILE.height, ORTHO_SIZE - y);
      sources.push(
        `<SimpleSource><SourceFilename relativeToVRT="0">${SOURCE_TILE}</SourceFilename><SourceBand>BAND</SourceBand>` +
          `<SrcRect xOff="0" yOff="0" xSize="${w}" ySize="${h}"/><DstRect xOff="${x}" yOff="${y}" xSize="${w}" ySize="${h}"/></SimpleSource>`,
      );
    }
  }
  const bands = ['Red', 'Green', 'Blue'].map(
    (colour, i) =>
      `<VRTRasterBand dataType="Byte" band="${i + 1}"><ColorInterp>${colour}</ColorInterp>` +
      `${sources.join('').replaceAll('BAND', String(i + 1))}</VRTRasterBand>`,
  );
  return (
    `<VRTDataset rasterXSize="${ORTHO_SIZE}" rasterYSize="${ORTHO_SIZE}"><SRS>EPSG:${ORIGIN.epsg}</SRS>` +
    `<GeoTransform>${ORIGIN.x}, ${ORTHO_PIXEL}, 0, ${ORIGIN.y}, 0, ${-ORTHO_PIXEL}</GeoTransform>${bands.join('')}</VRTDataset>`
  );
}

async function buildSources(dir: string): Promise<{ ortho: string; dsm: string }> {
  const vrt = join(dir, 'mosaic.vrt');
  const ortho = join(dir, 'ortho.tif');
  const dsm = join(dir, 'dsm.tif');
  await writeFile(vrt, mosaicVrt());
  const tiff = ['-co', 'TILED=YES', '-co', 'COMPRESS=DEFLATE', '-co', 'PREDICTOR=2', '-co', 'NUM_THREADS=ALL_CPUS'];
  await run('gdal_translate', ['-q', ...tiff, vrt, ortho]);
  await run('gdal_translate', [
    '-q',
    ...['-b', '1', '-outsize', `${DSM_SIZE}`, `${DSM_SIZE}`, '-r', 'average'],
    ...['-ot', 'Float32', '-scale', '0', '255', '270', '290'],
    ...['-co', 'TILED=YES', '-co', 'COMPRESS=DEFLATE'],
    ortho,
    dsm,
  ]);
  return { ortho, dsm };
}

/** Builds and ingests the survey once; later runs reuse `<dir>/survey.json` while its COGs exist. */
export async function benchSurvey(dir: string, log: (message: string) => void): Promise<BenchSurvey> {
  const cached = join(dir, 'survey.json');
  if (existsSync(cached)) {
    const saved = JSON.parse(await readFile(cached, 'utf8')) as BenchSurvey;
    // The catalogue holds storage keys (older rows: file URIs); the storage knows where either is.
    const storage = new LocalStorage(join(dir, 'data'));
    const paths = Object.values(saved.survey.assets).flatMap((a) => assetPaths(storage, a));
    if (paths.every((path) => existsSync(path))) return saved;
  }
  await mkdir(dir, { recursive: true });
  log(`building an ${ORTHO_SIZE} x ${ORTHO_SIZE} px orthophoto and a ${DSM_SIZE} x ${DSM_SIZE} px DSM`);
  const { ortho, dsm } = await buildSources(dir);
  log('ingesting them (COG writing, a minute or so)');
  const data = join(dir, 'data');
  const services = await createServices(parseConfig({ NADIR_DATA_DIR: data }, data), systemClock);
  try {
    const manifest = join(dir, 'manifest.json');
    await writeFile(
      manifest,
      JSON.stringify({ captureDate: '2024-05-01', assets: { TrueOrtho: ortho, DetailDsm: dsm } }),
    );
    const survey = await services.ingestor.ingestManifestFile(manifest);
    const { stdout } = await run('gdalinfo', ['-json', ortho]);
    const centre = (JSON.parse(stdout) as { wgs84Extent: { coordinates: number[][][] } }).wgs84Extent.coordinates[0];
    const lons = (centre ?? []).map((p) => p[0] as number);
    const lats = (centre ?? []).map((p) => p[1] as number);
    const result: BenchSurvey = {
      survey,
      centre: {
        lon: (Math.min(...lons) + Math.max(...lons)) / 2,
        lat: (Math.min(...lats) + Math.max(...lats)) / 2,
      },
    };
    await writeFile(cached, JSON.stringify(result));
    return result;
  } finally {
    await services.close();
  }
}
