/**
 * The units of an ingest's work, as plain data, so any worker process can take one: the collar
 * pass of one source file, and the warp + COG of one grid (a shard, a low COG, a single COG).
 * `runIngestJob` is what a worker does with one, in whatever process it runs.
 */
import { access, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { NadirError, oneLine } from '../errors.js';
import { type CogJob, writeGridCog } from './cog-writer.js';
import { maskBlackCollar } from './collar.js';
import type { SourceRaster } from './source.js';

/** Finds a source's black collar; the answer is kept in `<base>.collar.json` (a re-run reads it). */
export interface CollarJob {
  kind: 'collar';
  source: SourceRaster;
  /** Path prefix of the collar's files in the staging folder. */
  base: string;
}

export interface GridJob {
  kind: 'grid';
  cog: CogJob;
  /** For messages: `TrueOrtho shard 17/35/52`. */
  label: string;
}

export type IngestJob = CollarJob | GridJob;

/** A collar job's answer: the VRT with the collar as alpha, or none (no collar). */
export interface CollarResult {
  kind: 'collar';
  vrt?: string;
}

/** A grid job's answer: whether a COG was written (a shard over no source pixel is not). */
export interface GridResult {
  kind: 'grid';
  written: boolean;
}

export type IngestJobResult = CollarResult | GridResult;

/** What an error says in one line, GDAL's own message included, with the files it concerns. */
function jobError(job: IngestJob, error: unknown): NadirError {
  if (error instanceof NadirError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const files = job.kind === 'collar' ? job.source.path : job.cog.sources.map((s) => s.path).join(', ');
  const what = job.kind === 'collar' ? 'black collar' : job.label;
  return new NadirError('INVALID_SOURCE', oneLine(`${what} of ${files}: ${message || 'GDAL failed'}`));
}

/**
 * Runs one job. Its outputs appear only complete: a COG is written under a temporary name and
 * renamed, an empty shard leaves `<output>.empty`, a collar leaves its answer in JSON; so a job
 * whose outputs exist is done, and a killed ingest's re-run skips it (`finishedResult`).
 */
export async function runIngestJob(job: IngestJob, progress: (fraction: number) => void): Promise<IngestJobResult> {
  try {
    if (job.kind === 'collar') {
      const vrt = await maskBlackCollar(job.source, job.base, progress);
      await writeFile(`${job.base}.collar.json`, JSON.stringify({ vrt: vrt ?? null }));
      return { kind: 'collar', vrt };
    }
    const partial = `${job.cog.output}.partial`;
    const { written } = await writeGridCog({ ...job.cog, output: partial }, progress);
    if (written) await rename(partial, job.cog.output);
    else await writeFile(`${job.cog.output}.empty`, '');
    return { kind: 'grid', written };
  } catch (error) {
    await rm(job.kind === 'grid' ? `${job.cog.output}.partial` : `${job.base}.collar.json`, { force: true });
    throw jobError(job, error);
  }
}

/** The result of a job an earlier run finished, or undefined when it has to run. */
export async function finishedResult(job: IngestJob): Promise<IngestJobResult | undefined> {
  if (job.kind === 'collar') {
    const text = await readFile(`${job.base}.collar.json`, 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    const { vrt } = JSON.parse(text) as { vrt: string | null };
    return { kind: 'collar', vrt: vrt ?? undefined };
  }
  if (await exists(job.cog.output)) return { kind: 'grid', written: true };
  if (await exists(`${job.cog.output}.empty`)) return { kind: 'grid', written: false };
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
