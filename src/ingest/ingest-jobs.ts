/**
 * The units of an ingest's work, as plain data, so any worker process can take one, on this
 * machine or (through the queue) on another: the collar pass of one source file, and the warp +
 * COG of one grid (a shard, a low COG, a single COG). `runIngestJob` is what a worker does with
 * one, in whatever process it runs.
 */
import { access, rename, rm, writeFile } from 'node:fs/promises';
import { NadirError, oneLine } from '../errors.js';
import { type CogJob, writeGridCog } from './cog-writer.js';
import { findBlackCollar } from './collar.js';
import { firstReadError } from './read-check.js';
import type { SourceRaster } from './source.js';

/** Finds a source's black collar: its state raster at `state`, or `<state>.none` when there is none. */
export interface CollarJob {
  kind: 'collar';
  source: SourceRaster;
  /** Where the state raster is written (a local path). */
  state: string;
  /** Queue mode: the storage key the state raster is kept under, for workers on other machines. */
  store?: string;
}

export interface GridJob {
  kind: 'grid';
  cog: CogJob;
  /** For messages: `TrueOrtho shard 17/35/52`. */
  label: string;
  /** Queue mode: the storage key the COG goes to (its final place in the survey's version). */
  store?: string;
}

export type IngestJob = CollarJob | GridJob;

/** A collar job's answer: whether the source has a collar (then its state raster exists). */
export interface CollarResult {
  kind: 'collar';
  found: boolean;
}

/** A grid job's answer: whether a COG was written (a shard over no source pixel is not). */
export interface GridResult {
  kind: 'grid';
  written: boolean;
}

export type IngestJobResult = CollarResult | GridResult;

/** The marker a job leaves when it has no output: no collar, an empty shard. */
export function noOutputMarker(output: string, job: IngestJob): string {
  return `${output}${job.kind === 'collar' ? '.none' : '.empty'}`;
}

/**
 * What an error says in one line, GDAL's own message included, with the files it concerns. A
 * multi-threaded GDAL call fails with no message (read-check.ts says why): the sources are then
 * read again here to find the file, band and block GDAL cannot read, in GDAL's words.
 */
async function jobError(job: IngestJob, error: unknown): Promise<NadirError> {
  if (error instanceof NadirError) return error;
  const paths = job.kind === 'collar' ? [job.source.path] : job.cog.sources.map((s) => s.path);
  const what = job.kind === 'collar' ? 'black collar' : job.label;
  const message = error instanceof Error ? error.message : String(error);
  if (message.trim() !== '')
    return new NadirError('INVALID_SOURCE', oneLine(`${what} of ${paths.join(', ')}: ${message}`));
  // The read error names its own file, which matters for a shard of several sources.
  const unreadable = await firstReadError(paths).catch(() => undefined);
  if (unreadable) return new NadirError('INVALID_SOURCE', oneLine(`${what}: ${unreadable}`));
  return new NadirError(
    'INVALID_SOURCE',
    oneLine(`${what} of ${paths.join(', ')}: GDAL failed without a message, though every block of the sources reads`),
  );
}

/** Where the job writes its output, locally. */
export function jobOutput(job: IngestJob): string {
  return job.kind === 'collar' ? job.state : job.cog.output;
}

/**
 * Runs one job. Its outputs appear only complete: written under a temporary name and renamed, or
 * a marker when there is nothing to write (noOutputMarker); so a job whose output or marker exists
 * is done, and a killed ingest's re-run skips it (`finishedResult`).
 */
export async function runIngestJob(job: IngestJob, progress: (fraction: number) => void): Promise<IngestJobResult> {
  const output = jobOutput(job);
  const partial = `${output}.partial`;
  try {
    let done: boolean;
    if (job.kind === 'collar') done = await findBlackCollar(job.source, partial, progress);
    else done = (await writeGridCog({ ...job.cog, output: partial }, progress)).written;
    if (done) await rename(partial, output);
    else await writeFile(noOutputMarker(output, job), '');
    return job.kind === 'collar' ? { kind: 'collar', found: done } : { kind: 'grid', written: done };
  } catch (error) {
    await rm(partial, { force: true });
    throw await jobError(job, error);
  }
}

/** The result of a job an earlier run finished (its local output or marker), or undefined. */
export async function finishedResult(job: IngestJob): Promise<IngestJobResult | undefined> {
  const output = jobOutput(job);
  const result = (done: boolean): IngestJobResult =>
    job.kind === 'collar' ? { kind: 'collar', found: done } : { kind: 'grid', written: done };
  if (await exists(output)) return result(true);
  if (await exists(noOutputMarker(output, job))) return result(false);
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
