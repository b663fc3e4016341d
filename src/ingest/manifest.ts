import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { glob, isDynamicPattern } from 'tinyglobby';
import { CONTENT_TYPES, type ContentType, isContentType } from '../catalogue/survey.js';
import { NadirError, oneLine, quoted } from '../errors.js';
import { isIsoDate } from '../geo/dates.js';
import { localDayBoundsUtc, normalizeUtcInstant } from './times.js';

export interface SurveyManifest {
  id: string;
  captureDate: string;
  firstPhotoTime: string;
  lastPhotoTime: string;
  timezone?: string;
  tags: string[];
  /**
   * Source files by content type: a path, or several (a delivery cut into tiles), each of which
   * may be a glob (`ortho/*.tif`); absolute, or relative to the working folder. `sourceFiles`
   * expands them.
   */
  assets: Partial<Record<ContentType, string | string[]>>;
}

/** More source files than this in one asset is a mistake in the manifest, not a delivery. */
export const MAX_ASSET_FILES = 100_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TAG = /^[A-Za-z0-9_-]+(:[A-Za-z0-9_-]+)?$/;
const KNOWN_KEYS = new Set(['id', 'captureDate', 'firstPhotoTime', 'lastPhotoTime', 'timezone', 'tags', 'assets']);

function fail(message: string): never {
  throw new NadirError('INVALID_MANIFEST', message);
}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') fail(`"${field}" must be a string`);
  return value;
}

export function isIanaTimezone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/**
 * Validates a manifest object. Paths are resolved against `baseDir` (the manifest's folder).
 * Missing photo times default to the start and end of the capture date, in the survey's
 * timezone when one is given, else in UTC.
 */
export function parseManifest(raw: unknown, baseDir: string): SurveyManifest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('the manifest must be a JSON object');
  const m = raw as Record<string, unknown>;
  for (const key of Object.keys(m)) if (!KNOWN_KEYS.has(key)) fail(`unknown manifest field ${quoted(key)}`);

  const id = optionalString(m.id, 'id') ?? randomUUID();
  if (!UUID.test(id)) fail(`"id" must be a UUID, got ${quoted(id)}`);

  const captureDate = optionalString(m.captureDate, 'captureDate');
  if (!captureDate) fail('"captureDate" is required (YYYY-MM-DD)');
  if (!isIsoDate(captureDate)) fail(`"captureDate" must be a real date YYYY-MM-DD, got ${quoted(captureDate)}`);

  const timezone = optionalString(m.timezone, 'timezone');
  if (timezone !== undefined && !isIanaTimezone(timezone)) {
    fail(`"timezone" must be an IANA zone such as America/Chicago, got ${quoted(timezone)}`);
  }

  const [dayStart, dayEnd] = localDayBoundsUtc(captureDate, timezone);
  const first = optionalString(m.firstPhotoTime, 'firstPhotoTime');
  const last = optionalString(m.lastPhotoTime, 'lastPhotoTime');
  const firstPhotoTime = first === undefined ? dayStart : normalizeUtcInstant(first, 'firstPhotoTime');
  const lastPhotoTime = last === undefined ? dayEnd : normalizeUtcInstant(last, 'lastPhotoTime');
  if (firstPhotoTime > lastPhotoTime) fail('"firstPhotoTime" is after "lastPhotoTime"');

  const tags = m.tags ?? [];
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string' && TAG.test(tag))) {
    fail('"tags" must be a list of strings like "disaster" or "disaster:hurricane"');
  }

  if (typeof m.assets !== 'object' || m.assets === null || Array.isArray(m.assets)) {
    fail('"assets" must be an object mapping content types to file paths');
  }
  const assets: Partial<Record<ContentType, string[]>> = {};
  for (const [type, value] of Object.entries(m.assets as Record<string, unknown>)) {
    if (!isContentType(type)) fail(`unknown content type ${quoted(type)} (allowed: ${CONTENT_TYPES.join(', ')})`);
    const paths = Array.isArray(value) ? value : [value];
    if (
      paths.length === 0 ||
      paths.length > MAX_ASSET_FILES ||
      !paths.every((p) => typeof p === 'string' && p !== '')
    ) {
      fail(`asset ${quoted(type)} must be a file path, a glob such as "ortho/*.tif", or a list of them`);
    }
    assets[type] = (paths as string[]).map((path) => resolve(baseDir, path));
  }
  if (Object.keys(assets).length === 0) fail('"assets" must name at least one asset');

  return {
    id: id.toLowerCase(),
    captureDate,
    firstPhotoTime,
    lastPhotoTime,
    timezone,
    tags: [...new Set(tags as string[])],
    assets,
  };
}

/**
 * The files of one asset, in the order given, each glob expanded (sorted by path), each file once.
 * A glob that matches nothing is an error naming it: a delivery with a typo must not ingest as a
 * survey with a hole.
 */
export async function sourceFiles(type: ContentType, entry: string | readonly string[]): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  for (const pattern of typeof entry === 'string' ? [entry] : entry) {
    let matches = [pattern];
    if (isDynamicPattern(pattern)) {
      matches = (await glob(pattern, { absolute: true, onlyFiles: true, expandDirectories: false })).sort();
      if (matches.length === 0) fail(`asset ${quoted(type)}: ${quoted(pattern)} matches no file`);
    }
    for (const file of matches) {
      if (!seen.has(file)) files.push(file);
      seen.add(file);
    }
  }
  if (files.length > MAX_ASSET_FILES)
    fail(`asset ${quoted(type)} has ${files.length} files, more than ${MAX_ASSET_FILES}`);
  return files;
}

export async function readManifest(path: string): Promise<SurveyManifest> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    fail(oneLine(`cannot read manifest ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`));
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    // V8's message quotes the text around the mistake, line breaks and all: one line here.
    fail(oneLine(`manifest ${path} is not valid JSON: ${(error as Error).message}`));
  }
  return parseManifest(raw, dirname(resolve(path)));
}
