/**
 * A delivery as ingest first meets it: every file of every asset listed (globs expanded) and
 * checked before anything is written, and the fingerprint that tells a re-run of the same delivery
 * (which resumes) from a changed one (which starts afresh under a new version).
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { ContentType } from '../catalogue/survey.js';
import { type SurveyManifest, sourceFiles } from './manifest.js';
import { inspectSource, type SourceRaster } from './source.js';

/** One asset as checked: its content type and its source files. */
export interface CheckedAsset {
  type: ContentType;
  sources: SourceRaster[];
}

/** What shapes the COGs besides the files: part of the fingerprint, and of a queued survey. */
export interface IngestSettings {
  /** Levels a shard holds (geo/asset-layout.ts SHARD_LEVELS). */
  shardLevels: number;
  /** JPEG quality of stored imagery. */
  jpegQuality: number;
}

/** Every source of every asset, inspected; an error names the file in one line. */
export async function checkDelivery(manifest: SurveyManifest, say: (label: string) => void): Promise<CheckedAsset[]> {
  say('checking sources');
  const listed: Array<[ContentType, string[]]> = [];
  for (const [type, entry] of Object.entries(manifest.assets) as [ContentType, string | string[]][]) {
    listed.push([type, await sourceFiles(type, entry)]);
  }
  const count = listed.reduce((sum, [, files]) => sum + files.length, 0);
  const checked: CheckedAsset[] = [];
  let seen = 0;
  for (const [type, files] of listed) {
    const sources: SourceRaster[] = [];
    for (const file of files) {
      say(`checking sources (${++seen}/${count})`);
      sources.push(await inspectSource(type, file));
    }
    checked.push({ type, sources });
  }
  return checked;
}

/** Same manifest, same files (size and modification time), same settings: the same delivery. */
export async function deliveryFingerprint(
  manifest: SurveyManifest,
  checked: CheckedAsset[],
  settings: IngestSettings,
): Promise<string> {
  const hash = createHash('sha256');
  hash.update(canonicalJson({ manifest, shardLevels: settings.shardLevels, jpegQuality: settings.jpegQuality }));
  for (const { sources } of checked) {
    for (const { path } of sources) {
      const { size, mtimeMs } = await stat(path);
      hash.update(`${path}\0${size}\0${mtimeMs}\0`);
    }
  }
  return hash.digest('hex');
}

/**
 * JSON with every object's keys sorted: the same manifest gives the same text whichever way it
 * came (a file, or PostgreSQL's jsonb, which reorders keys, when a worker reads a queued survey).
 */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}
