import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { planDownload } from '../../plan.js';
import { oneOf, rasterType } from '../../query.js';
import { RASTER_FORMATS, type RasterType, type Survey } from '../../types.js';
import { downloadImages } from '../download.js';
import { FileTokenStore } from '../file-token-store.js';
import {
  AREA_OPTIONS,
  areaOf,
  asUsage,
  CliUsageError,
  parseCommandLine,
  SERVER_OPTIONS,
  serverSettings,
} from './arguments.js';
import { type Command, clientFor, printJson } from './context.js';
import { formatBytes, ProgressBoard } from './progress-board.js';

/** The token file a download folder keeps, so a resumed or repeated download reuses its token. */
export const TOKEN_FILE = '.nadir-tokens.json';

export function rasterTypes(text: string): RasterType[] {
  const types = text.split(',');
  const parsed = asUsage(() => types.map((type) => rasterType(type.trim(), '--types')));
  return [...new Set(parsed)];
}

function waitNote(ms: number, why: string): string {
  return `waiting ${(ms / 1000).toFixed(1)} s (${why})`;
}

export const downloadCommand: Command = {
  name: 'download',
  summary: "downloads every survey of an area at each type's native resolution, one file per survey and type",
  usage:
    'nadir-client download (--point LON,LAT --radius M | --aoi FILE.geojson) --out DIR [--types TrueOrtho,DetailDsm] [--format tif|jpg|png] [--since D] [--until D] [--latest] [--progress] [--json]',
  async run(args, context) {
    const { values } = parseCommandLine(args, {
      ...SERVER_OPTIONS,
      ...AREA_OPTIONS,
      types: { type: 'string' },
      format: { type: 'string' },
      out: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      latest: { type: 'boolean' },
      progress: { type: 'boolean' },
    });
    const settings = serverSettings(values, context.env);
    const aoi = await areaOf(values);
    if (!values.out) throw new CliUsageError('--out DIR is required');
    const types = values.types === undefined ? (['TrueOrtho', 'DetailDsm'] as RasterType[]) : rasterTypes(values.types);
    const format = asUsage(() => oneOf('--format', values.format ?? 'tif', RASTER_FORMATS));
    const out = values.out;
    const showProgress = values.progress === true || context.stderr.isTTY === true;
    let board: ProgressBoard | undefined;
    const client = clientFor(settings, context, {
      tokenStore: new FileTokenStore(join(out, TOKEN_FILE)),
      onRetryWait: (wait) => board?.note(waitNote(wait.ms, wait.why)),
    });
    // The folder must exist before the token file is written into it.
    await mkdir(out, { recursive: true });
    const query = asUsage(() => ({
      aoi,
      resources: types,
      filter: 'anyTypes' as const,
      ...(values.since === undefined ? {} : { since: values.since }),
      ...(values.until === undefined ? {} : { until: values.until }),
      limit: 1000,
    }));
    let surveys: Survey[] = [];
    for await (const survey of client.surveys({ ...query, signal: context.signal })) surveys.push(survey);
    if (values.latest) surveys = surveys.slice(0, 1);
    const plan = planDownload(surveys, types, format, aoi);
    if (showProgress) board = new ProgressBoard(context.stderr, plan.images.length, context.clock);
    const records = new Map<string, { outcome: string; bytes: number }>();
    try {
      await downloadImages(client, aoi, plan.images, out, {
        signal: context.signal,
        onStart: (image) => board?.start(image.fileName),
        onProgress: (image, progress) => board?.progress(image.fileName, progress.received, progress.total),
        onDone: (image, outcome, bytes) => {
          records.set(image.fileName, { outcome, bytes });
          board?.finish(image.fileName, `${outcome}, ${formatBytes(bytes)}`);
        },
      });
    } finally {
      board?.end();
    }
    const files = plan.images.map((image) => ({
      file: image.fileName,
      surveyId: image.surveyId,
      captureDate: image.captureDate,
      type: image.type,
      size: image.size,
      gsd: image.gsd,
      capped: image.capped,
      ...records.get(image.fileName),
    }));
    if (values.json) {
      printJson(context, { point: aoi.point, radius: aoi.radius, out, files, missing: plan.missing });
      return 0;
    }
    const downloaded = files.filter((file) => file.outcome === 'downloaded').length;
    context.stdout.write(
      `${files.length} files in ${out}: ${downloaded} downloaded, ${files.length - downloaded} already there` +
        `${surveys.length === 0 ? ' (no survey covers this area)' : ''}\n`,
    );
    for (const file of files.filter((f) => f.capped)) {
      context.stdout.write(
        `${file.file}: native size over 5000 px; downloaded at ${file.gsd.toFixed(3)} m per pixel\n`,
      );
    }
    return 0;
  },
};
