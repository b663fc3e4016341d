/**
 * DsmChange against the GDAL command line: a 2000 x 2000 px height change (after - before) of
 * the demo town's hurricane survey against its predecessor, by nadir's raster engine in-process
 * (compiled, as served) and by the command line: gdalwarp twice, then the subtraction. gdal_calc.py
 * is installed but cannot run here (it needs Python's GDAL bindings, python3-gdal, which are
 * absent), so the CLI subtracts with a VRT whose band is GDAL's built-in `diff` pixel function,
 * written to a GeoTIFF by gdal_translate with nadir's creation options. The warps write NaN as
 * nodata, which the difference carries, so the product is the same: nodata where either has none.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEMO_SURVEYS, DEMO_TOWN_ORIGIN_UTM, utmToLonLat } from '@nadir/demo-town';
import type { Survey } from '../../src/catalogue/survey.js';
import { createServices } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { aoiGrid } from '../../src/geo/aoi-grid.js';
import type * as RasterModule from '../../src/raster/index.js';
import type * as LocalStorageModule from '../../src/storage/local-storage.js';
import { assetDataset } from '../asset-dataset.js';
import { importCompiled } from '../load/compiled.js';
import { measureCommands, type Sample } from '../raster/measure.js';
import type { SectionOptions } from '../report/section.js';
import type { ChangeContender, ChangeRaw } from './raw.js';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const WORK = join(ROOT, 'bench/work/change');
const TOWN = join(WORK, 'town');
const SIZE = 2000;
const RADIUS = 100;

/** The demo town, made once by `nadir demo` (a few minutes the first time). */
async function demoTown(log: (line: string) => void, fresh: boolean): Promise<void> {
  if (fresh) await rm(TOWN, { recursive: true, force: true });
  if (existsSync(join(TOWN, 'nadir.sqlite'))) return;
  log('change: generating the demo town (nadir demo)');
  await mkdir(TOWN, { recursive: true });
  await exec(join(ROOT, 'bin/nadir'), ['demo', '--json'], {
    env: { ...process.env, NADIR_DATA_DIR: TOWN, NADIR_LOG_LEVEL: 'warn' },
    maxBuffer: 16 << 20,
  });
}

async function surveyOf(id: string): Promise<Survey> {
  const services = await createServices(
    parseConfig({ NADIR_DATA_DIR: TOWN, NADIR_LOG_LEVEL: 'silent' }, TOWN),
    () => new Date(),
  );
  try {
    const survey = await services.catalogue.get(id);
    if (!survey?.assets.DetailDsm) throw new Error(`demo survey ${id} has no DetailDsm in ${TOWN}`);
    return survey;
  } finally {
    await services.close();
  }
}

/** The command line's product: two warps (NaN nodata), then `diff` in a VRT written as a GeoTIFF. */
function cliCommands(cogs: [string, string], bounds: number[], tuned: boolean, out: string): string[][] {
  const warp = ['-q', '-overwrite', '-t_srs', 'EPSG:3857', '-te', ...bounds.map(String), '-ts', `${SIZE}`, `${SIZE}`];
  warp.push('-r', 'bilinear', '-ot', 'Float32', '-dstnodata', 'nan');
  if (tuned) warp.push('-multi', '-wo', 'NUM_THREADS=ALL_CPUS', '-wm', '128');
  const co = ['TILED=YES', 'BLOCKXSIZE=256', 'BLOCKYSIZE=256', 'COMPRESS=DEFLATE', 'ZLEVEL=3', 'PREDICTOR=3'];
  if (tuned) co.push('NUM_THREADS=ALL_CPUS');
  return [
    ['gdalwarp', ...warp, cogs[0], `${out}.after.tif`],
    ['gdalwarp', ...warp, cogs[1], `${out}.before.tif`],
    ['gdal_translate', '-q', ...co.flatMap((option) => ['-co', option]), `${out}.vrt`, out],
  ];
}

function diffVrt(out: string): string {
  return `<VRTDataset rasterXSize="${SIZE}" rasterYSize="${SIZE}">
  <VRTRasterBand dataType="Float32" band="1" subClass="VRTDerivedRasterBand">
    <NoDataValue>nan</NoDataValue>
    <PixelFunctionType>diff</PixelFunctionType>
    <SimpleSource><SourceFilename relativeToVRT="0">${out}.after.tif</SourceFilename><SourceBand>1</SourceBand></SimpleSource>
    <SimpleSource><SourceFilename relativeToVRT="0">${out}.before.tif</SourceFilename><SourceBand>1</SourceBand></SimpleSource>
  </VRTRasterBand>
</VRTDataset>
`;
}

/** nadir's tif (nodata -9999) against the CLI's (nodata NaN), value by value. */
async function compare(nadirTif: string, cliTif: string): Promise<ChangeRaw['agreement']> {
  const gdal = (await import('gdal-async')).default;
  const read = async (path: string) => {
    const ds = await gdal.openAsync(path);
    try {
      const band = await ds.bands.getAsync(1);
      return await band.pixels.readAsync(0, 0, SIZE, SIZE, new Float32Array(SIZE * SIZE));
    } finally {
      ds.close();
    }
  };
  const [ours, theirs] = await Promise.all([read(nadirTif), read(cliTif)]);
  let maxDifference = 0;
  let sameNodata = true;
  let compared = 0;
  for (let i = 0; i < ours.length; i++) {
    const a = ours[i] as number;
    const b = theirs[i] as number;
    if (a === -9999 || Number.isNaN(b)) {
      if (!(a === -9999 && Number.isNaN(b))) sameNodata = false;
      continue;
    }
    compared++;
    maxDifference = Math.max(maxDifference, Math.abs(a - b));
  }
  return { maxDifference, sameNodata, compared };
}

export async function measureChange(options: SectionOptions): Promise<ChangeRaw> {
  const started = Date.now();
  const rounds = options.quick ? 1 : 5;
  await mkdir(WORK, { recursive: true });
  await demoTown(options.log, options.fresh);
  const [, before, after] = DEMO_SURVEYS;
  if (!before || !after) throw new Error('the demo has three surveys');
  const [afterSurvey, beforeSurvey] = await Promise.all([surveyOf(after.id), surveyOf(before.id)]);
  // Inside both surveys: 100 m east and south of the town centre.
  const [lon, lat] = utmToLonLat(DEMO_TOWN_ORIGIN_UTM.easting + 100, DEMO_TOWN_ORIGIN_UTM.northing - 100);
  const aoi = { lon, lat, radius: RADIUS };
  const { bounds } = aoiGrid(aoi, SIZE);
  const { RasterEngine } = await importCompiled<typeof RasterModule>('raster/index.js');
  const { LocalStorage } = await importCompiled<typeof LocalStorageModule>('storage/local-storage.js');
  const storage = new LocalStorage(TOWN);
  const engine = new RasterEngine({ storage });
  const afterDsm = afterSurvey.assets.DetailDsm as NonNullable<Survey['assets']['DetailDsm']>;
  const beforeDsm = beforeSurvey.assets.DetailDsm as NonNullable<Survey['assets']['DetailDsm']>;
  const cogs: [string, string] = [
    await assetDataset(storage, afterDsm, join(TOWN, 'after-dsm.vrt')),
    await assetDataset(storage, beforeDsm, join(TOWN, 'before-dsm.vrt')),
  ];
  const box = [bounds.minX, bounds.minY, bounds.maxX, bounds.maxY];
  const outputs = {
    engine: join(WORK, 'nadir.tif'),
    gdal: join(WORK, 'gdal.tif'),
    gdalTuned: join(WORK, 'gdal-tuned.tif'),
  };
  for (const out of [outputs.gdal, outputs.gdalTuned]) await writeFile(`${out}.vrt`, diffVrt(out));

  const request = { after: afterDsm, before: beforeDsm, aoi, size: SIZE, format: 'tif' as const, threshold: 2 };
  const samples: Record<ChangeContender, Sample[]> = { engine: [], gdal: [], gdalTuned: [] };
  const loadStart = loadavg();
  // One warm-up of each (file cache, GDAL's block cache for nadir as a server has it), then rounds interleaved.
  await engine.renderChange(request);
  await measureCommands(cliCommands(cogs, box, false, outputs.gdal), outputs.gdal, outputs.gdal);
  for (let round = 0; round < rounds; round++) {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    const result = await engine.renderChange(request);
    const ms = performance.now() - t0;
    const { user, system } = process.cpuUsage(cpu);
    if (!result.file) throw new Error('the engine made no GeoTIFF');
    if (round === 0) await writeFile(outputs.engine, result.file.body);
    samples.engine.push({ ms, peakMb: Number.NaN, cpuSeconds: (user + system) / 1e6, bytes: result.file.body.length });
    samples.gdal.push(await measureCommands(cliCommands(cogs, box, false, outputs.gdal), outputs.gdal, outputs.gdal));
    samples.gdalTuned.push(
      await measureCommands(cliCommands(cogs, box, true, outputs.gdalTuned), outputs.gdalTuned, outputs.gdalTuned),
    );
    options.log(
      `change: round ${round + 1}/${rounds}: engine ${ms.toFixed(0)} ms, gdal ${samples.gdal.at(-1)?.ms.toFixed(0)} ms`,
    );
  }
  const loadEnd = loadavg();
  const { stdout: gdalVersion } = await exec('gdalinfo', ['--version']);
  return {
    size: SIZE,
    rounds,
    aoi,
    surveys: { after: after.id, before: before.id },
    subtraction:
      'gdal_calc.py is installed but fails without Python GDAL bindings (python3-gdal); the CLI subtracts with a VRT `diff` pixel function written by gdal_translate',
    commands: cliCommands(['after.tif', 'before.tif'], box, false, 'gdal.tif'),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '', loadStart, loadEnd },
    versions: { gdal: gdalVersion.trim(), node: process.version },
    samples,
    agreement: await compare(outputs.engine, outputs.gdal),
    seconds: (Date.now() - started) / 1000,
  };
}
