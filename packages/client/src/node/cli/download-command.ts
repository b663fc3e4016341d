import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Aoi } from '../../area.js';
import type { AreaGrid } from '../../area-grid.js';
import type { NadirClient } from '../../client.js';
import { type PlannedImage, planDownload } from '../../plan.js';
import { oneOf, rasterType } from '../../query.js';
import {
  IMAGERY_TYPES,
  type ImageryType,
  RASTER_FORMATS,
  type RasterFormat,
  type RasterType,
  type Survey,
} from '../../types.js';
import { CELLS_FOLDER, downloadArea, planArea } from '../area-download.js';
import { type DownloadEvents, downloadImages } from '../download.js';
import {
  AREA_OPTIONS,
  areaOrGrid,
  asUsage,
  CliUsageError,
  DATE_OPTIONS,
  dateFilters,
  serverCommandLine,
} from './arguments.js';
import { type Command, CommandProgress, clientFor, commandTokens, printJson } from './context.js';
import { formatBytes, type ProgressBoard } from './progress-board.js';

/** The token file a download folder keeps, so a resumed or repeated download reuses its tokens. */
export const TOKEN_FILE = '.nadir-tokens.json';

export function rasterTypes(text: string): RasterType[] {
  const parsed = asUsage(() => text.split(',').map((type) => rasterType(type.trim(), '--types')));
  return [...new Set(parsed)];
}

/** Download types: the raster types and DsmChange. */
export function imageryTypes(text: string): ImageryType[] {
  const parsed = asUsage(() => text.split(',').map((type) => oneOf('--types', type.trim(), IMAGERY_TYPES)));
  return [...new Set(parsed)];
}

/** What coverage is asked for: a change needs DetailDsm of both surveys. */
function coverageTypes(types: ImageryType[]): RasterType[] {
  return [...new Set(types.map((type) => (type === 'DsmChange' ? 'DetailDsm' : type)))];
}

interface Filters {
  since?: string;
  until?: string;
  latest?: boolean;
  baseline?: string;
  signal: AbortSignal;
}

/** One AOI: its surveys' images, named by date, survey and type. */
async function planOneArea(
  client: NadirClient,
  aoi: Aoi,
  types: ImageryType[],
  format: RasterFormat,
  filters: Filters,
) {
  const surveys: Survey[] = [];
  const query = asUsage(() => ({
    aoi,
    resources: coverageTypes(types),
    filter: 'anyTypes' as const,
    limit: 1000,
    ...(filters.since === undefined ? {} : { since: filters.since }),
    ...(filters.until === undefined ? {} : { until: filters.until }),
  }));
  for await (const survey of client.surveys({ ...query, signal: filters.signal })) surveys.push(survey);
  // Planned on every survey and cut afterwards: the latest survey's change needs the older ones as baseline.
  const plan = planDownload(surveys, types, format, aoi, filters.baseline ? { baseline: filters.baseline } : {});
  if (!filters.latest) return plan;
  const latest = surveys[0]?.id;
  return {
    images: plan.images.filter((image) => image.surveyId === latest),
    missing: plan.missing.filter((gap) => gap.surveyId === latest),
  };
}

function withProgress(
  board: ProgressBoard | undefined,
  records: Map<string, { outcome: string; bytes: number }>,
): DownloadEvents {
  return {
    onStart: (image) => board?.start(image.fileName),
    onProgress: (image, progress) => board?.progress(image.fileName, progress.received, progress.total),
    onDone: (image, outcome, bytes) => {
      records.set(image.fileName, { outcome, bytes });
      board?.finish(image.fileName, `${outcome}, ${formatBytes(bytes)}`);
    },
  };
}

function describe(images: PlannedImage[], records: Map<string, { outcome: string; bytes: number }>, prefix = '') {
  return images.map((image) => ({
    file: `${prefix}${image.fileName}`,
    surveyId: image.surveyId,
    captureDate: image.captureDate,
    type: image.type,
    ...(image.baseline ? { baseline: image.baseline } : {}),
    size: image.size,
    gsd: image.gsd,
    capped: image.capped,
    ...records.get(image.fileName),
  }));
}

export const downloadCommand: Command = {
  name: 'download',
  summary: "downloads every survey of an area at each type's native resolution, one file per survey and type",
  usage:
    'nadir-client download (--point LON,LAT --radius M | --aoi FILE.geojson [--split]) --out DIR [--types TrueOrtho,DetailDsm,DsmChange] [--baseline ID] [--format tif|jpg|png] [--since D] [--until D] [--latest] [--progress] [--json]',
  async run(args, context) {
    const { values, settings } = serverCommandLine(
      args,
      {
        ...AREA_OPTIONS,
        types: { type: 'string' },
        format: { type: 'string' },
        out: { type: 'string' },
        ...DATE_OPTIONS,
        latest: { type: 'boolean' },
        baseline: { type: 'string' },
        split: { type: 'boolean' },
        progress: { type: 'boolean' },
      },
      context.env,
    );
    const area = await areaOrGrid(values, values.split === true);
    if (!values.out) throw new CliUsageError('--out DIR is required');
    const out = values.out;
    const types =
      values.types === undefined ? (['TrueOrtho', 'DetailDsm'] as ImageryType[]) : imageryTypes(values.types);
    // Each cell of a split area would pick its own baseline, and the VRT would mosaic different changes.
    if (area.grid && types.includes('DsmChange'))
      throw new CliUsageError('--types DsmChange does not combine with --split');
    if (values.baseline !== undefined && !types.includes('DsmChange'))
      throw new CliUsageError('--baseline applies to --types DsmChange');
    const format = asUsage(() => oneOf('--format', values.format ?? 'tif', RASTER_FORMATS));
    const filters: Filters = {
      signal: context.signal,
      ...dateFilters(values),
      ...(values.latest ? { latest: true } : {}),
      ...(values.baseline === undefined ? {} : { baseline: values.baseline }),
    };
    const progress = new CommandProgress(context, values.progress);
    // Tokens are written (to the folder and the user's file) only once there is something to fetch.
    const tokens = commandTokens(context, join(out, TOKEN_FILE));
    const client = clientFor(settings, context, { tokenStore: tokens, onRetryWait: progress.onRetryWait });
    const records = new Map<string, { outcome: string; bytes: number }>();
    const fetchImages = async (count: number) => {
      await mkdir(out, { recursive: true });
      await tokens.commit();
      progress.start(count);
      return withProgress(progress.board, records);
    };
    const report = area.grid
      ? await splitDownload(client, area.grid, types as RasterType[], format, out, filters, fetchImages, records)
      : await singleDownload(client, area.aoi as Aoi, types, format, out, filters, fetchImages, records);
    progress.board?.end();
    const gaps = typesNotFound(types, report.files, filters.latest === true);
    if (values.json) printJson(context, { out, ...report, complete: gaps.length === 0 });
    else printReport(context.stdout, out, report);
    for (const gap of gaps) context.stderr.write(`nadir-client download: ${gap}\n`);
    // 0 only when everything asked for is there: a type no survey has here is not "done".
    return gaps.length === 0 ? 0 : 1;
  },
};

/** What was asked for and is not there: no survey at all, or a type that no survey has here. */
function typesNotFound(types: ImageryType[], files: { type: ImageryType }[], latest: boolean): string[] {
  if (files.length === 0) return [`no survey covers this area with ${types.join(' or ')}`];
  return types
    .filter((type) => !files.some((file) => file.type === type))
    .map((type) =>
      type === 'DsmChange'
        ? `no change: ${latest ? 'the latest survey has no older survey' : 'no survey has an older one'} with DetailDsm here`
        : latest
          ? `the latest survey has no ${type} here`
          : `no survey has ${type} here`,
    );
}

function printReport(
  stdout: { write(text: string): unknown },
  out: string,
  report: { files: ReturnType<typeof describe>; cells?: number; mosaics?: unknown[] },
): void {
  const downloaded = report.files.filter((file) => file.outcome === 'downloaded').length;
  const skipped = report.files.length - downloaded;
  stdout.write(`${report.files.length} files in ${out}: ${downloaded} downloaded, ${skipped} already there\n`);
  if (report.mosaics)
    stdout.write(`${report.cells} areas (each a transaction), ${report.mosaics.length} VRT mosaics\n`);
  for (const file of report.files.filter((f) => f.capped)) {
    stdout.write(`${file.file}: native size over 5000 px; downloaded at ${file.gsd.toFixed(3)} m per pixel\n`);
  }
}

/** Called once the plan has images: makes the folder, commits the tokens, returns the events. */
type FetchImages = (count: number) => Promise<DownloadEvents>;

async function singleDownload(
  client: NadirClient,
  aoi: Aoi,
  types: ImageryType[],
  format: RasterFormat,
  out: string,
  filters: Filters,
  fetchImages: FetchImages,
  records: Map<string, { outcome: string; bytes: number }>,
) {
  const plan = await planOneArea(client, aoi, types, format, filters);
  if (plan.images.length > 0) {
    const events = await fetchImages(plan.images.length);
    await downloadImages(client, aoi, plan.images, out, { signal: filters.signal, ...events });
  }
  return { point: aoi.point, radius: aoi.radius, files: describe(plan.images, records), missing: plan.missing };
}

async function splitDownload(
  client: NadirClient,
  grid: AreaGrid,
  types: RasterType[],
  format: RasterFormat,
  out: string,
  filters: Filters,
  fetchImages: FetchImages,
  records: Map<string, { outcome: string; bytes: number }>,
) {
  const plan = await planArea(client, grid, types, format, filters);
  if (plan.images.length > 0) {
    const events = await fetchImages(plan.images.length);
    await downloadArea(client, grid, plan, out, { signal: filters.signal, ...events });
  }
  return {
    cells: grid.cells.length,
    grid: { rows: grid.rows, columns: grid.columns },
    files: describe(plan.images, records, `${CELLS_FOLDER}/`),
    mosaics: plan.mosaics,
  };
}
