import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Asset } from '../../src/catalogue/survey.js';
import type { Clock } from '../../src/clock.js';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { testClock } from './clock.js';
import { watchedLogStream, watchIssuedSecrets } from './secret-watch.js';

export const run = promisify(execFile);

/** ../shared/realdata beside the project (CI has it there). */
export const REALDATA = resolve(import.meta.dirname, '../../../shared/realdata');
export const HAVE_REALDATA = existsSync(join(REALDATA, 'README.md'));
export const SKIP_REALDATA = HAVE_REALDATA
  ? false
  : `no ${REALDATA}: the shared real rasters are not beside the project`;

export const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

export async function tempDir(prefix: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `nadir-${prefix}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Services over a data folder; their log lines are watched for secrets (secret-watch.ts), not printed. */
export async function servicesFor(dataDir: string, now: Clock = testClock().now): Promise<Services> {
  const config = parseConfig({ NADIR_DATA_DIR: dataDir }, dataDir);
  return watchIssuedSecrets(await createServices(config, now, { logStream: watchedLogStream(undefined, dataDir) }));
}

/** What GDAL opens for an asset of `services`' storage (a local path for the data folder). */
export function assetPath(services: Pick<Services, 'storage'>, asset: Pick<Asset, 'uri'> | undefined): string {
  if (!asset) throw new Error('no such asset');
  return services.storage.gdalPath(asset.uri);
}

export async function writeManifest(dir: string, name: string, manifest: unknown): Promise<string> {
  const path = join(dir, `${name}.json`);
  await writeFile(path, JSON.stringify(manifest));
  return path;
}

/** `gdalinfo -json` of a file: the independent view of what ingest wrote. */
export async function gdalinfo(path: string, ...args: string[]): Promise<GdalInfo> {
  const { stdout } = await run('gdalinfo', ['-json', ...args, path], { maxBuffer: 64 << 20 });
  return JSON.parse(stdout) as GdalInfo;
}

export interface GdalInfo {
  size: [number, number];
  geoTransform: [number, number, number, number, number, number];
  coordinateSystem?: { wkt: string };
  metadata: Record<string, Record<string, string>>;
  bands: {
    band: number;
    block: [number, number];
    type: string;
    colorInterpretation: string;
    noDataValue?: number;
    mask?: { flags: string[]; overviews?: unknown[] };
    overviews?: { size: [number, number] }[];
    minimum?: number;
    maximum?: number;
    mean?: number;
  }[];
}

/** The command-line entry point run from source, for tests of whole processes. */
export function cliArgs(...args: string[]): string[] {
  return ['--import', 'tsx', join(PROJECT_ROOT, 'src/cli/bin.ts'), ...args];
}
