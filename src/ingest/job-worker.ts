/**
 * A local ingest worker process (`nadir ingest --workers N` forks N of them): takes jobs from its
 * parent over IPC, one at a time, and answers with progress, the result, or the error. GDAL runs
 * here with the process's own block cache bound (memory.ts), so N workers hold N bounded caches.
 */
import { NadirError } from '../errors.js';
import { type IngestJob, runIngestJob } from './ingest-jobs.js';
import { boundIngestMemory } from './ingest-memory.js';
import type { WorkerMessage, WorkerRequest } from './worker-pool.js';

boundIngestMemory();

function send(message: WorkerMessage): void {
  process.send?.(message);
}

process.on('message', (request: WorkerRequest) => {
  const job: IngestJob = request.job;
  let last = 0;
  runIngestJob(job, (fraction) => {
    // A few messages a job, not one per GDAL callback.
    if (fraction - last >= 0.02 || fraction === 1) {
      last = fraction;
      send({ id: request.id, progress: fraction });
    }
  }).then(
    (result) => send({ id: request.id, result }),
    (error: unknown) => {
      const code = error instanceof NadirError ? error.code : 'INTERNAL';
      send({ id: request.id, error: { code, message: error instanceof Error ? error.message : String(error) } });
    },
  );
});
// The parent going away (a killed `nadir ingest`) ends the worker too.
process.on('disconnect', () => process.exit(0));
