/**
 * Metrics of queued ingest (PostgreSQL), from `nadir worker` with NADIR_METRICS_PORT: the jobs this
 * worker ran (done, failed: each failed attempt, which the queue retries up to its limit) and
 * their durations, the jobs running in it now, and the whole queue's jobs by state with its
 * progress, read from the queue at each scrape. No survey id is a label: the queue is summed.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { IngestQueue, JobEvent } from '../ingest/ingest-queue.js';
import { type MetricsEndpoint, registryScrape, startMetricsEndpoint } from './metrics-endpoint.js';

/** A job writes one COG or collar: seconds to tens of minutes. */
const JOB_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 3600];

export class IngestMetrics {
  readonly registry = new Registry();
  readonly #jobs = new Counter({
    name: 'nadir_ingest_jobs_total',
    help: 'Ingest jobs this worker finished, by result: done, or failed (an attempt; the queue retries it up to its limit).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly #running = new Gauge({
    name: 'nadir_ingest_jobs_running',
    help: 'Ingest jobs this worker is running now.',
    registers: [this.registry],
  });
  readonly #duration = new Histogram({
    name: 'nadir_ingest_job_duration_seconds',
    help: 'How long an ingest job took on this worker, done or failed.',
    buckets: JOB_BUCKETS,
    registers: [this.registry],
  });

  constructor(queue: Pick<IngestQueue, 'status'>) {
    collectDefaultMetrics({ register: this.registry, prefix: 'nadir_' });
    for (const result of ['done', 'failed']) this.#jobs.inc({ result }, 0);
    // One query of the queue per scrape, shared by both gauges: the first (in registration order)
    // asks, the second takes its answer and clears it for the next scrape.
    let latest: Promise<{ waiting: number; running: number; done: number; failed: number }> | undefined;
    const counts = () => {
      latest ??= queue.status().then((surveys) => {
        const sum = { waiting: 0, running: 0, done: 0, failed: 0 };
        for (const survey of surveys) {
          sum.waiting += survey.waiting;
          sum.running += survey.active;
          sum.done += survey.done;
          sum.failed += survey.failed;
        }
        return sum;
      });
      return latest;
    };
    new Gauge({
      name: 'nadir_ingest_jobs',
      help: 'Jobs in the ingest queue (every worker and survey), by state: waiting, running, done, failed (for good).',
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        for (const [state, count] of Object.entries(await counts())) this.set({ state }, count);
      },
    });
    new Gauge({
      name: 'nadir_ingest_progress_ratio',
      help: 'Share of the queued jobs that are done (1 when the queue has nothing left to do).',
      registers: [this.registry],
      async collect() {
        const { waiting, running, done, failed } = await counts();
        const all = waiting + running + done + failed;
        this.set(all === 0 ? 1 : done / all);
        latest = undefined;
      },
    });
  }

  /** The worker's onJob (ingest-queue.ts). */
  job(event: JobEvent): void {
    if (event.state === 'started') {
      this.#running.inc();
      return;
    }
    this.#running.dec();
    this.#jobs.inc({ result: event.state });
    this.#duration.observe(event.seconds);
  }
}

/** The worker's metrics on its own port; undefined when NADIR_METRICS_PORT is not set. */
export async function startIngestMetrics(
  queue: Pick<IngestQueue, 'status'>,
  at: { host: string; port: number } | undefined,
): Promise<{ metrics: IngestMetrics; endpoint: MetricsEndpoint } | undefined> {
  if (!at) return undefined;
  const metrics = new IngestMetrics(queue);
  return { metrics, endpoint: await startMetricsEndpoint(registryScrape(metrics.registry), at.host, at.port) };
}
