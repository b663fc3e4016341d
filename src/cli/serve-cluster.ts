/**
 * `nadir serve --workers N`: N worker processes share the port (node:cluster), because one Node
 * event loop is what bounds a single process's tile rate, and gdal-async cannot run in worker
 * threads. The primary only supervises: it restarts a worker that dies, relays SIGTERM for a
 * graceful stop, and holds the tile rate-limit counters that workers lease from (rate-lease.ts).
 */
import cluster, { type Worker } from 'node:cluster';
import type { LeaseRequest, RequestLease } from '../limits/rate-lease.js';
import { MemoryRateLimiter, type RateGrant } from '../limits/rate-limiter.js';

const LEASE_MESSAGE = 'nadir-rate-lease';

interface LeaseAsk extends LeaseRequest {
  type: typeof LEASE_MESSAGE;
  id: number;
}

interface LeaseAnswer {
  type: typeof LEASE_MESSAGE;
  id: number;
  grant: RateGrant;
}

/** Runs in the primary until SIGTERM/SIGINT; returns the exit code. */
export async function superviseWorkers(workers: number, log: (line: string) => void): Promise<number> {
  const limiter = new MemoryRateLimiter();
  let stopping = false;
  const answer = (worker: Worker, message: unknown) => {
    const ask = message as Partial<LeaseAsk>;
    if (ask?.type !== LEASE_MESSAGE || typeof ask.id !== 'number') return;
    const grant = limiter.grant(
      ask.key as string,
      ask.limit as number,
      ask.intervalSeconds as number,
      new Date(ask.at as number),
      ask.want as number,
    );
    worker.send({ type: LEASE_MESSAGE, id: ask.id, grant } satisfies LeaseAnswer);
  };
  cluster.on('message', answer);
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    log(`nadir: worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    cluster.fork();
  });
  for (let i = 0; i < workers; i++) cluster.fork();
  await new Promise<void>((resolve) => {
    const stop = () => {
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
      resolve();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await new Promise<void>((resolve) => {
    const check = () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) resolve();
    };
    cluster.on('exit', check);
    check();
  });
  return 0;
}

/** In a worker: asks the primary for a lease of tile requests. */
export function leaseFromPrimary(): RequestLease {
  let next = 0;
  const waiting = new Map<number, (grant: RateGrant) => void>();
  process.on('message', (message: unknown) => {
    const reply = message as Partial<LeaseAnswer>;
    if (reply?.type !== LEASE_MESSAGE || typeof reply.id !== 'number' || !reply.grant) return;
    waiting.get(reply.id)?.(reply.grant);
    waiting.delete(reply.id);
  });
  return (request) =>
    new Promise<RateGrant>((resolve, reject) => {
      const id = next++;
      waiting.set(id, resolve);
      const ask: LeaseAsk = { type: LEASE_MESSAGE, id, ...request };
      process.send?.(ask, undefined, undefined, (error) => {
        if (error) {
          waiting.delete(id);
          reject(error);
        }
      });
    });
}

export const isClusterWorker = (): boolean => cluster.isWorker;
