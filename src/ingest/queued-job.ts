/**
 * A queued job's output in the survey storage, where every worker and the coordinator find it: a
 * job is finished when its output (or its no-output marker) is stored at its key, so a job that
 * ran twice, or a retried step, redoes nothing (ingest-queue.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SurveyStorage } from '../storage/storage.js';
import { type IngestJob, type IngestJobResult, jobOutput, noOutputMarker, runIngestJob } from './ingest-jobs.js';

export function storedKey(job: IngestJob): string {
  if (!job.store) throw new Error('a queued ingest job needs the storage key of its output');
  return job.store;
}

function resultOf(job: IngestJob, done: boolean): IngestJobResult {
  return job.kind === 'collar' ? { kind: 'collar', found: done } : { kind: 'grid', written: done };
}

/** The result of each job whose output (or no-output marker) is in `present`. */
export function finishedFrom(jobs: readonly IngestJob[], present: Set<string>): Array<IngestJobResult | undefined> {
  return jobs.map((job) => {
    const key = storedKey(job);
    if (present.has(key)) return resultOf(job, true);
    if (present.has(noOutputMarker(key, job))) return resultOf(job, false);
    return undefined;
  });
}

/** Every key under the folders of these jobs' outputs. */
export async function storedKeys(storage: SurveyStorage, jobs: readonly IngestJob[]): Promise<Set<string>> {
  const prefixes = new Set(jobs.map((job) => storedKey(job).replace(/[^/]*$/, '')));
  // One listing per version folder: the common prefix of the folders (`surveys/<id>/v<n>/`).
  const versions = new Set([...prefixes].map((p) => /^surveys\/[^/]+\/v\d+\//.exec(p)?.[0] ?? p));
  const keys = new Set<string>();
  for (const prefix of versions) for await (const { key } of storage.list(prefix)) keys.add(key);
  return keys;
}

/**
 * One queued job on this machine: skipped when its output is already in storage (a job run twice,
 * a re-run), else run in a temporary folder of its own and its output (or no-output marker) put
 * at its key.
 */
export async function runQueuedJob(
  queued: IngestJob,
  storage: SurveyStorage,
  workDir: string,
  threads: number,
  run: (job: IngestJob) => Promise<IngestJobResult> = (job) => runIngestJob(job, () => {}),
): Promise<IngestJobResult> {
  const key = storedKey(queued);
  const [already] = finishedFrom([queued], await keysAt(storage, key));
  if (already) return already;
  const dir = await mkdtemp(join(workDir, 'job-'));
  try {
    const job: IngestJob =
      queued.kind === 'collar'
        ? { ...queued, state: join(dir, 'collar.tif') }
        : { ...queued, cog: { ...queued.cog, output: join(dir, 'cog.tif'), threads } };
    const result = await run(job);
    const produced = result.kind === 'collar' ? result.found : result.written;
    if (produced) await storage.put(key, jobOutput(job));
    else await storage.put(noOutputMarker(key, job), noOutputMarker(jobOutput(job), job));
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function keysAt(storage: SurveyStorage, key: string): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const object of storage.list(key)) keys.add(object.key);
  return keys;
}
