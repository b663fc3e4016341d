/**
 * A survey ingested through the queue with no process that must stay alive for it:
 * - `nadir ingest --queue` checks the delivery (an error names the file before anything is
 *   queued), reserves the survey's version and sends one coordinating step;
 * - a `nadir worker` takes the step and runs the ingest's coordinator (ingest-survey.ts, the same
 *   code as a local ingest), which sends the survey's jobs to the job queue and waits for them;
 * - a step that has waited `stepSeconds` sends the next step and ends, so a worker killed while
 *   coordinating costs at most one job timeout before another worker's step goes on from the jobs'
 *   outputs in storage;
 * - the step that sees the last job done makes the survey visible in one catalogue transaction.
 * The command follows it with a progress bar, or with `--detach` returns once it is sent; killing
 * it changes nothing.
 */
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import { NadirError } from '../errors.js';
import { type IngestQueue, StepDeadline, type StepOutcome, type SurveyRequest } from './ingest-queue.js';
import type { IngestProgress, SurveyIngestor } from './ingest-survey.js';
import type { SurveyManifest } from './manifest.js';

type Queue = Pick<IngestQueue, 'latestStep' | 'sendSurvey' | 'runner' | 'stepSeconds' | 'status'>;

/**
 * Sends `manifest` as a queued survey. The same delivery sent again while its version is still
 * pending is not sent twice: its steps go on (a failed one gets new tries).
 */
export async function sendQueuedSurvey(
  ingestor: SurveyIngestor,
  queue: Queue,
  manifest: SurveyManifest,
  onProgress: IngestProgress,
): Promise<SurveyRequest> {
  const latest = await queue.latestStep(manifest.id);
  const pending = latest && !(latest.outcome?.committed ?? false) ? latest : undefined;
  const reservation = await ingestor.reserveQueued(manifest, onProgress, pending?.request);
  if (pending && pending.request.version === reservation.version) {
    if (pending.state === 'failed' || pending.state === 'cancelled') await queue.sendSurvey(pending.request);
    return pending.request;
  }
  const request: SurveyRequest = { manifest, ...reservation, step: 0 };
  await queue.sendSurvey(request);
  return request;
}

/** One coordinating step of a queued survey, as a worker runs it. */
export async function coordinateStep(
  parts: { ingestor: SurveyIngestor; queue: Queue; catalogue: Pick<SurveyCatalogue, 'get'> },
  request: SurveyRequest,
  onProgress?: IngestProgress,
): Promise<StepOutcome> {
  const { manifest, version, fingerprint, settings, step } = request;
  // A step retried after its worker died may find the survey already made visible by the next one.
  if ((await parts.catalogue.get(manifest.id))?.version === version) return { committed: true, version };
  const deadline = performance.now() + parts.queue.stepSeconds * 1000;
  try {
    const queued = { version, fingerprint, settings, deadline };
    const survey = await parts.ingestor.ingest(manifest, onProgress, { queue: parts.queue, queued });
    return { committed: true, version: survey.version };
  } catch (error) {
    if (!(error instanceof StepDeadline)) throw error;
    await parts.queue.sendSurvey({ ...request, step: step + 1 });
    return { committed: false, next: step + 1 };
  }
}

/**
 * Follows a queued survey until it is visible (resolves with its version) or has failed for good
 * (rejects with the worker's message), reporting the jobs done so far.
 */
export async function followQueuedSurvey(
  queue: Queue,
  request: SurveyRequest,
  onProgress: IngestProgress,
  pause: () => Promise<void>,
): Promise<number> {
  const { id } = request.manifest;
  for (;;) {
    const latest = await queue.latestStep(id);
    if (!latest || latest.request.version !== request.version) {
      throw new NadirError('INVALID_SOURCE', `survey ${id} version ${request.version}: superseded by a later ingest`);
    }
    if (latest.outcome?.committed) return latest.outcome.version;
    if (latest.state === 'failed' || latest.state === 'cancelled') {
      throw new NadirError('INVALID_SOURCE', latest.error ?? `survey ${id}: its ingest was ${latest.state}`);
    }
    const jobs = (await queue.status(id)).find((s) => s.version === request.version);
    const total = jobs ? jobs.waiting + jobs.active + jobs.done + jobs.failed : 0;
    let label = `${jobs?.done ?? 0}/${total} jobs done, ${jobs?.active ?? 0} running`;
    if (latest.state !== 'active' && !jobs?.active) label = 'waiting for a nadir worker';
    if (latest.state === 'retry' && latest.error) label = `retrying after: ${latest.error}`;
    // The jobs of later phases are sent as earlier ones finish: the bar can step back a little.
    onProgress({ survey: id, label, fraction: total === 0 ? 0 : (jobs?.done ?? 0) / total });
    await pause();
  }
}
