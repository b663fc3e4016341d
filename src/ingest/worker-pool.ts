/**
 * Where an ingest's jobs run: in this process one after another, or on N local worker processes
 * (job-worker.ts) at once. GDAL cannot load in worker threads, so parallel ingest is processes,
 * each with its own bounded block cache; a job's GDAL threads are the cores shared out.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type ErrorCode, NadirError } from '../errors.js';
import { finishedResult, type IngestJob, type IngestJobResult, runIngestJob } from './ingest-jobs.js';

export interface WorkerRequest {
  id: number;
  job: IngestJob;
}

export type WorkerMessage =
  | { id: number; progress: number }
  | { id: number; result: IngestJobResult }
  | { id: number; error: { code: ErrorCode; message: string } };

export interface JobRunner {
  /** GDAL threads each job may use. */
  readonly threadsPerJob: number;
  /**
   * Jobs put their outputs into the survey storage themselves (`store` keys: the queue's workers
   * on other machines); otherwise they are the local files the job names, stored at the end.
   */
  readonly storesOutputs: boolean;
  /** The results of the jobs an earlier run finished (undefined: still to do). */
  finished(jobs: readonly IngestJob[]): Promise<Array<IngestJobResult | undefined>>;
  /** Runs the jobs, as many at once as there are workers; rejects with the first failure. */
  run(jobs: readonly IngestJob[], progress: (index: number, fraction: number) => void): Promise<IngestJobResult[]>;
  close(): Promise<void>;
}

/** One job at a time in this process, with every core for GDAL. */
export class InProcessRunner implements JobRunner {
  readonly threadsPerJob = availableParallelism();
  readonly storesOutputs = false;

  finished(jobs: readonly IngestJob[]) {
    return Promise.all(jobs.map(finishedResult));
  }

  async run(jobs: readonly IngestJob[], progress: (index: number, fraction: number) => void) {
    const results: IngestJobResult[] = [];
    for (const [index, job] of jobs.entries()) results.push(await runIngestJob(job, (f) => progress(index, f)));
    return results;
  }

  async close(): Promise<void> {}
}

/** The worker's module beside this one: compiled JavaScript, or TypeScript run through tsx (tests). */
function workerModule(): { path: string; execArgv: string[] } {
  const typescript = import.meta.url.endsWith('.ts');
  const path = fileURLToPath(new URL(`./job-worker.${typescript ? 'ts' : 'js'}`, import.meta.url));
  return { path, execArgv: typescript ? ['--import', 'tsx'] : [] };
}

/**
 * A worker's environment: glibc's malloc arenas capped at two (unless the environment says
 * otherwise). GDAL's warp and compression threads each allocate their chunk buffers in an arena of
 * their own, and freed arena memory mostly stays with the process: over a run of shards a worker
 * grew to 2.1 GB with the default (one arena per thread, up to 8 per core), where two arenas keep
 * it near one shard's need (measured: docs/ingest.md).
 */
function workerEnvironment(): NodeJS.ProcessEnv {
  return { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' };
}

interface Worker {
  child: ChildProcess;
  busy?: { id: number; index: number };
}

/** N worker processes, started on first use and kept until `close`. */
export class WorkerPool implements JobRunner {
  readonly size: number;
  readonly threadsPerJob: number;
  readonly storesOutputs = false;
  readonly #workers: Worker[] = [];
  #nextId = 0;

  readonly #env: NodeJS.ProcessEnv;

  /**
   * `gdalSettings`: GDAL configuration the workers need (the storage's, from
   * open-storage.ts gdalStorageSettings): GDAL reads its options from the environment too.
   */
  constructor(size: number, cores = availableParallelism(), gdalSettings: Record<string, string> = {}) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`workers must be a whole number >= 1, got ${size}`);
    this.size = size;
    this.threadsPerJob = Math.max(1, Math.floor(cores / size));
    this.#env = { ...workerEnvironment(), ...gdalSettings };
  }

  finished(jobs: readonly IngestJob[]) {
    return Promise.all(jobs.map(finishedResult));
  }

  run(jobs: readonly IngestJob[], progress: (index: number, fraction: number) => void): Promise<IngestJobResult[]> {
    if (jobs.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const results: IngestJobResult[] = new Array(jobs.length);
      let next = 0;
      let finished = 0;
      let settled = false;
      // Listeners go with the run, whatever its end, so a pool used for many runs leaks none.
      const detachers: Array<() => void> = [];
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        for (const detach of detachers) detach();
        if (error) reject(error);
        else resolve(results);
      };
      const give = (worker: Worker) => {
        if (settled) return;
        if (next >= jobs.length) {
          worker.busy = undefined;
          if (finished === jobs.length) settle();
          return;
        }
        const index = next++;
        const id = this.#nextId++;
        worker.busy = { id, index };
        worker.child.send({ id, job: jobs[index] as IngestJob } satisfies WorkerRequest);
      };
      for (let i = 0; i < Math.min(this.size, jobs.length); i++) {
        const worker = this.#worker(i);
        const onMessage = (message: WorkerMessage) => {
          const busy = worker.busy;
          if (!busy || message.id !== busy.id) return;
          if ('progress' in message) progress(busy.index, message.progress);
          else if ('result' in message) {
            results[busy.index] = message.result;
            finished++;
            progress(busy.index, 1);
            give(worker);
          } else settle(new NadirError(message.error.code, message.error.message));
        };
        const onExit = (code: number | null, signal: string | null) => {
          settle(new Error(`ingest worker ${worker.child.pid} ended (${signal ?? `exit code ${code}`}) during a job`));
        };
        worker.child.on('message', onMessage);
        worker.child.on('exit', onExit);
        detachers.push(() => {
          worker.child.off('message', onMessage);
          worker.child.off('exit', onExit);
        });
        give(worker);
      }
    });
  }

  #worker(index: number): Worker {
    let worker = this.#workers[index];
    if (!worker || worker.child.exitCode !== null || worker.child.signalCode !== null) {
      const { path, execArgv } = workerModule();
      const child = fork(path, [], {
        env: this.#env,
        execArgv,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      worker = { child };
      this.#workers[index] = worker;
    }
    return worker;
  }

  async close(): Promise<void> {
    await Promise.all(
      this.#workers.map(
        ({ child }) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    this.#workers.length = 0;
  }
}
