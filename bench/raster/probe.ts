/**
 * Peak memory of renders, each probe in a fresh process (run by bench/raster/run.ts):
 *
 *   probe.ts <survey.json> single <TrueOrtho|DetailDsm> <tif|jpg|png> <size>
 *   probe.ts <survey.json> concurrent <admission|unbounded>
 *
 * Prints JSON: idle RSS after a small warm-up render (GDAL, drivers and the COG opened), peak RSS
 * (VmHWM) during the measured render(s), and for `concurrent` how many were rendered.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Asset } from '../../src/catalogue/survey.js';
import type * as ErrorsModule from '../../src/errors.js';
import type * as RasterModule from '../../src/raster/index.js';
import type { ImageFormat, RasterEngineOptions } from '../../src/raster/index.js';
import type * as LocalStorageModule from '../../src/storage/local-storage.js';
import { importCompiled } from '../load/compiled.js';
import { idleRssMb, peakRssMb, resetPeak } from './measure.js';
import type { BenchSurvey } from './source.js';

export interface Probe {
  idleMb: number;
  peakMb: number;
  ms: number;
  requests: number;
  ok: number;
  overloaded: number;
}

const RADIUS = 100;
const [surveyFile, mode, ...rest] = process.argv.slice(2);
const bench = JSON.parse(await readFile(surveyFile as string, 'utf8')) as BenchSurvey;
const aoi = { ...bench.centre, radius: RADIUS };
const ortho = bench.survey.assets.TrueOrtho as Asset;
const dsm = bench.survey.assets.DetailDsm as Asset;

type Job = { asset: Asset; format: ImageFormat; size: number };

function jobs(): { options: Omit<RasterEngineOptions, 'storage'>; list: Job[] } {
  if (mode === 'single') {
    const [type, format, size] = rest;
    return {
      options: {},
      list: [{ asset: type === 'DetailDsm' ? dsm : ortho, format: format as ImageFormat, size: Number(size) }],
    };
  }
  // Eight 5000 x 5000 requests at once: 3 ortho tif, 3 ortho jpg, 2 DSM png.
  const list: Job[] = [
    ...(['tif', 'jpg', 'tif', 'jpg', 'tif', 'jpg'] as const).map((format) => ({ asset: ortho, format, size: 5000 })),
    { asset: dsm, format: 'png', size: 5000 },
    { asset: dsm, format: 'png', size: 5000 },
  ];
  const unbounded = { budget: Number.MAX_SAFE_INTEGER, maxQueuedCost: Number.MAX_SAFE_INTEGER };
  return { options: rest[0] === 'unbounded' ? { admission: unbounded } : {}, list };
}

const { options, list } = jobs();
// The compiled engine, as the server runs it; its errors are checked with the same module's test.
const { RasterEngine } = await importCompiled<typeof RasterModule>('raster/index.js');
const { LocalStorage } = await importCompiled<typeof LocalStorageModule>('storage/local-storage.js');
const { isNadirError } = await importCompiled<typeof ErrorsModule>('errors.js');
// The bench survey's files are in the data folder beside its description.
const engine = new RasterEngine({ storage: new LocalStorage(join(dirname(surveyFile as string), 'data')), ...options });
for (const asset of new Set(list.map((job) => job.asset))) {
  for (const format of new Set(list.map((job) => job.format))) await engine.renderAoi({ asset, aoi, size: 64, format });
}
const idleMb = await idleRssMb();
if (!(await resetPeak())) throw new Error('cannot reset the peak RSS mark (/proc/self/clear_refs)');
const started = performance.now();
const settled = await Promise.allSettled(list.map((job) => engine.renderAoi({ ...job, aoi })));
const ms = performance.now() - started;
const peakMb = await peakRssMb();
const failures = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason] : []));
const overloaded = failures.filter((e) => isNadirError(e) && e.code === 'OVERLOADED').length;
if (overloaded !== failures.length) throw failures.find((e) => !(isNadirError(e) && e.code === 'OVERLOADED'));
const probe: Probe = { idleMb, peakMb, ms, requests: list.length, ok: list.length - failures.length, overloaded };
process.stdout.write(JSON.stringify(probe));
