/**
 * Ingest across machines, through queues on the deployment's PostgreSQL: pg-boss (a maintained
 * queue on PostgreSQL's SKIP LOCKED; version 10, the last for Node 20), in a schema of its own.
 * Two queues: surveys to coordinate (one short step each, queued-ingest.ts) and their jobs. The
 * coordinator sends a survey's jobs; `nadir worker` on any machine with the same NADIR_DATABASE
 * and NADIR_STORAGE takes them, writes each output in a temporary folder of its own and puts it
 * straight into the survey storage at its final key. A job whose worker is killed is failed by
 * pg-boss once it outlives its timeout and retried by another worker; every job first looks in
 * storage for its output, so a job that ran twice, or a retried step, redoes no finished work.
 */
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import PgBoss from 'pg-boss';
import { NadirError } from '../errors.js';
import type { SurveyStorage } from '../storage/storage.js';
import type { IngestSettings } from './delivery.js';
import type { IngestJob, IngestJobResult } from './ingest-jobs.js';
import type { SurveyManifest } from './manifest.js';
import { finishedFrom, runQueuedJob, storedKey, storedKeys } from './queued-job.js';
import { type JobRunner, WorkerPool } from './worker-pool.js';

/** The queue of shard, collar and low-zoom jobs, in pg-boss. */
export const INGEST_QUEUE = 'nadir-ingest';
/** The queue of surveys to coordinate: one step of queued-ingest.ts each. */
export const SURVEY_QUEUE = 'nadir-ingest-survey';
/** pg-boss's tables live in this schema of the deployment's database. */
const QUEUE_SCHEMA = 'nadir_ingest_queue';

export interface IngestQueueOptions {
  /**
   * How long one job may run before it counts as lost (its worker killed or cut off) and goes to
   * another worker: longer than the slowest shard (an 8,192 px shard takes tens of seconds).
   */
  jobTimeoutSeconds: number;
  /** How often pg-boss looks for lost jobs. */
  maintenanceSeconds: number;
  /** How often a waiting ingest and an idle worker look at the queue. */
  pollSeconds: number;
  /** Tries after the first, for a job that failed or was lost. */
  retries: number;
}

export const DEFAULT_QUEUE_OPTIONS: IngestQueueOptions = {
  jobTimeoutSeconds: 15 * 60,
  maintenanceSeconds: 60,
  pollSeconds: 1,
  retries: 3,
};

/** What a queued job carries: the job and the survey version it belongs to. */
interface QueuedJob {
  survey: string;
  version: number;
  job: IngestJob;
}

/** A queued survey, as `nadir ingest --queue` sends it; `step` counts its coordinating steps. */
export interface SurveyRequest {
  manifest: SurveyManifest;
  version: number;
  fingerprint: string;
  settings: IngestSettings;
  step: number;
}

/** The latest step of a queued survey, as pg-boss holds it. */
export interface SurveyStepState {
  request: SurveyRequest;
  state: 'created' | 'retry' | 'active' | 'completed' | 'expired' | 'cancelled' | 'failed';
  /** A completed step's answer; a failed one's error message. */
  outcome?: StepOutcome;
  error?: string;
}

/** How a coordinating step ended: the survey is visible, or a next step was sent. */
export type StepOutcome = { committed: true; version: number } | { committed: false; next: number };

/**
 * Thrown when a coordinating step has waited as long as it may: a step is a job, and pg-boss
 * counts a job running past its timeout as lost, so a long survey is coordinated by a chain of
 * short steps, each picking up from the jobs' outputs in storage.
 */
export class StepDeadline extends Error {
  constructor() {
    super('the coordinating step ran out of time; the next step goes on');
  }
}

/** What a worker reports of each job it takes. */
export interface JobEvent {
  state: 'started' | 'done' | 'failed';
  label: string;
  seconds: number;
  error?: string;
}

/** One survey's jobs in the queue, for `nadir ingest status`. */
export interface QueuedSurvey {
  survey: string;
  version: number;
  waiting: number;
  active: number;
  done: number;
  failed: number;
  /** First job started, last job finished (ISO instants). */
  startedAt?: string;
  lastDoneAt?: string;
  /** Mean seconds of a finished job. */
  meanJobSeconds?: number;
}

/** A job's id from its output's key (or a step's name): sending it again finds the same job. */
function jobId(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export class IngestQueue {
  readonly #boss: PgBoss;
  readonly #options: IngestQueueOptions;

  private constructor(boss: PgBoss, options: IngestQueueOptions) {
    this.#boss = boss;
    this.#options = options;
  }

  /** Connects (creating pg-boss's schema on first use); fails loudly when the database is not there. */
  static async open(url: string, options: Partial<IngestQueueOptions> = {}): Promise<IngestQueue> {
    const settings = { ...DEFAULT_QUEUE_OPTIONS, ...options };
    const boss = new PgBoss({
      connectionString: url,
      schema: QUEUE_SCHEMA,
      max: 4,
      maintenanceIntervalSeconds: settings.maintenanceSeconds,
    });
    const errors: Error[] = [];
    boss.on('error', (error: Error) => errors.push(error));
    try {
      await boss.start();
      for (const name of [INGEST_QUEUE, SURVEY_QUEUE]) {
        await boss.createQueue(name, {
          name,
          retryLimit: settings.retries,
          expireInSeconds: settings.jobTimeoutSeconds,
        });
      }
    } catch (error) {
      await boss.stop({ graceful: false, wait: false }).catch(() => undefined);
      throw new NadirError(
        'INVALID_CONFIG',
        `the ingest queue on NADIR_DATABASE cannot be used: ${(error as Error).message}`,
      );
    }
    return new IngestQueue(boss, settings);
  }

  async close(): Promise<void> {
    await this.#boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  }

  /**
   * The runner of a queued survey's coordinator: sends each job once (a job already queued or
   * done keeps its id) and waits for all of them, until `deadline` (performance.now()), when it
   * throws StepDeadline.
   */
  runner(survey: string, version: number, storage: SurveyStorage, deadline?: number): JobRunner {
    return {
      threadsPerJob: 0, // each worker shares out its own cores
      storesOutputs: true,
      finished: async (jobs) => finishedFrom(jobs, await storedKeys(storage, jobs)),
      run: (jobs, progress) => this.#runAndWait(survey, version, jobs, progress, deadline),
      close: async () => {},
    };
  }

  /** Sends one coordinating step of a survey (again: a step already sent keeps its id). */
  async sendSurvey(request: SurveyRequest): Promise<void> {
    const { manifest, version, fingerprint, step } = request;
    const id = jobId(`${manifest.id}/v${version}/${fingerprint}/step-${step}`);
    await this.#boss.send(SURVEY_QUEUE, request, { id });
    // Sent before and failed (its tries spent): new tries, as for a job.
    await this.#boss.retry(SURVEY_QUEUE, id);
  }

  /** The latest step sent for survey `id` (any version), or undefined. */
  async latestStep(id: string): Promise<SurveyStepState | undefined> {
    const { rows } = await this.#boss.getDb().executeSql(
      `SELECT data, state, output FROM ${QUEUE_SCHEMA}.job WHERE name = $1 AND data->'manifest'->>'id' = $2
       ORDER BY created_on DESC, (data->>'step')::int DESC LIMIT 1`,
      [SURVEY_QUEUE, id],
    );
    const row = (rows as Array<{ data: SurveyRequest; state: SurveyStepState['state']; output: unknown }>)[0];
    if (!row) return undefined;
    const output = row.output as (StepOutcome & { message?: string }) | null;
    return {
      request: row.data,
      state: row.state,
      ...(row.state === 'completed' && output ? { outcome: output } : {}),
      ...(row.state !== 'completed' && output?.message ? { error: output.message } : {}),
    };
  }

  /**
   * Coordinates queued surveys until stopped, one at a time (a step mostly waits on jobs, taken
   * by the job slots of `work`). Resolves with the function that stops it.
   */
  async workSurveys(coordinate: (request: SurveyRequest) => Promise<StepOutcome>): Promise<() => Promise<void>> {
    const options = { batchSize: 1, pollingIntervalSeconds: this.#options.pollSeconds };
    await this.#boss.work(SURVEY_QUEUE, options, async ([job]: PgBoss.Job<SurveyRequest>[]) =>
      job ? coordinate(job.data) : undefined,
    );
    return () => this.#boss.offWork(SURVEY_QUEUE);
  }

  /** How long a coordinating step may wait: half a job's timeout, so it is never taken for lost. */
  get stepSeconds(): number {
    return this.#options.jobTimeoutSeconds / 2;
  }

  async #runAndWait(
    survey: string,
    version: number,
    jobs: readonly IngestJob[],
    progress: (index: number, fraction: number) => void,
    deadline = Number.POSITIVE_INFINITY,
  ): Promise<IngestJobResult[]> {
    if (jobs.length === 0) return [];
    const ids = jobs.map((job) => jobId(storedKey(job)));
    for (const [index, job] of jobs.entries()) {
      const data: QueuedJob = { survey, version, job };
      await this.#boss.send(INGEST_QUEUE, data, { id: ids[index] });
    }
    // A job an earlier attempt left failed (its tries spent) keeps its id, so sending it again did
    // nothing: give it new tries, or a re-run would only read the old failure.
    await this.#boss.retry(INGEST_QUEUE, ids);
    const results: Array<IngestJobResult | undefined> = new Array(jobs.length);
    const index = new Map(ids.map((id, i) => [id, i]));
    const db = this.#boss.getDb();
    for (;;) {
      const pending = ids.filter((_, i) => results[i] === undefined);
      if (pending.length === 0) return results as IngestJobResult[];
      // pg-boss's own table (its documented schema): one query for every job still waited for.
      const { rows } = await db.executeSql(
        `SELECT id, state, output FROM ${QUEUE_SCHEMA}.job WHERE name = $1 AND id = ANY($2::uuid[])`,
        [INGEST_QUEUE, pending],
      );
      for (const row of rows as Array<{ id: string; state: string; output: unknown }>) {
        const i = index.get(row.id) as number;
        if (row.state === 'completed') {
          results[i] = row.output as IngestJobResult;
          progress(i, 1);
        } else if (row.state === 'failed') {
          const message = (row.output as { message?: string } | null)?.message ?? 'failed';
          throw new NadirError('INVALID_SOURCE', message);
        }
      }
      if (results.includes(undefined) && performance.now() > deadline) throw new StepDeadline();
      await new Promise((resolve) => setTimeout(resolve, this.#options.pollSeconds * 1000));
    }
  }

  /**
   * Takes jobs until `stop` is called: `concurrency` at once, each written in a temporary folder
   * under `workDir` and put into `storage`. Resolves with the function that stops it.
   */
  async work(
    storage: SurveyStorage,
    workDir: string,
    concurrency: number,
    gdalSettings: Record<string, string>,
    onJob: (event: JobEvent) => void = () => {},
  ): Promise<() => Promise<void>> {
    await mkdir(workDir, { recursive: true });
    const threads = Math.max(1, Math.floor(availableParallelism() / concurrency));
    // Each job slot runs its GDAL work in a worker process of its own (worker-pool.ts): bounded
    // malloc arenas, and a crash in GDAL fails the job, not the worker.
    const pools = Array.from({ length: concurrency }, () => new WorkerPool(1, threads, gdalSettings));
    const handlerFor =
      (pool: WorkerPool) =>
      async ([job]: PgBoss.Job<QueuedJob>[]) => {
        if (!job) return undefined;
        const started = performance.now();
        const label = job.data.job.kind === 'collar' ? `collar of ${job.data.job.source.path}` : job.data.job.label;
        const seconds = () => (performance.now() - started) / 1000;
        onJob({ state: 'started', label, seconds: 0 });
        try {
          const result = await runQueuedJob(job.data.job, storage, workDir, threads, async (local) => {
            const [done] = await pool.run([local], () => {});
            return done as IngestJobResult;
          });
          onJob({ state: 'done', label, seconds: seconds() });
          return result;
        } catch (error) {
          onJob({ state: 'failed', label, seconds: seconds(), error: (error as Error).message });
          throw error;
        }
      };
    for (const pool of pools) {
      const options = { batchSize: 1, pollingIntervalSeconds: this.#options.pollSeconds };
      await this.#boss.work(INGEST_QUEUE, options, handlerFor(pool));
    }
    return async () => {
      await this.#boss.offWork(INGEST_QUEUE);
      await Promise.all(pools.map((pool) => pool.close()));
    };
  }

  /** Every survey with jobs in the queue (or only survey `id`'s versions), newest first. */
  async status(id?: string): Promise<QueuedSurvey[]> {
    const { rows } = await this.#boss.getDb().executeSql(
      `SELECT data->>'survey' AS survey, (data->>'version')::int AS version,
         count(*) FILTER (WHERE state IN ('created', 'retry'))::int AS waiting,
         count(*) FILTER (WHERE state = 'active')::int AS active,
         count(*) FILTER (WHERE state = 'completed')::int AS done,
         count(*) FILTER (WHERE state IN ('failed', 'cancelled'))::int AS failed,
         min(started_on) AS started, max(completed_on) FILTER (WHERE state = 'completed') AS last_done,
         avg(extract(epoch FROM completed_on - started_on)) FILTER (WHERE state = 'completed') AS mean
       FROM ${QUEUE_SCHEMA}.job WHERE name = $1 AND ($2::text IS NULL OR data->>'survey' = $2)
       GROUP BY 1, 2 ORDER BY min(created_on) DESC`,
      [INGEST_QUEUE, id ?? null],
    );
    return (rows as Array<Record<string, unknown>>).map((row) => ({
      survey: String(row.survey),
      version: Number(row.version),
      waiting: Number(row.waiting),
      active: Number(row.active),
      done: Number(row.done),
      failed: Number(row.failed),
      ...(row.started ? { startedAt: new Date(row.started as string).toISOString() } : {}),
      ...(row.last_done ? { lastDoneAt: new Date(row.last_done as string).toISOString() } : {}),
      ...(row.mean !== null && row.mean !== undefined ? { meanJobSeconds: Number(row.mean) } : {}),
    }));
  }
}
