import { availableParallelism } from 'node:os';
import { buildServer } from '../../api/server.js';
import { createServices, type Services } from '../../composition.js';
import { LeasedRateLimiter } from '../../limits/rate-lease.js';
import {
  clusterScrape,
  type MetricsEndpoint,
  registryScrape,
  shareWithPrimary,
  startMetricsEndpoint,
} from '../../metrics/metrics-endpoint.js';
import { type CliContext, type Command, parseCommandArgs, UsageError, wholeNumber } from '../command.js';
import { isClusterWorker, leaseFromPrimary, superviseWorkers } from '../serve-cluster.js';
import { systemClock } from '../system-clock.js';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the HTTP service (NADIR_HOST, NADIR_PORT, NADIR_DATA_DIR, NADIR_DATABASE)',
  usage: `nadir serve [--port N] [--host H] [--workers N|auto]

Environment: NADIR_PORT (8080), NADIR_HOST (0.0.0.0), NADIR_DATA_DIR (./data),
NADIR_DATABASE (<data>/nadir.sqlite), NADIR_LOG_LEVEL (info), NADIR_TOKEN_SECRETS,
NADIR_WORKERS (1); NADIR_HTTP_HEADERS_TIMEOUT_MS (60000), NADIR_HTTP_REQUEST_TIMEOUT_MS
(300000), NADIR_HTTP_KEEP_ALIVE_TIMEOUT_MS (72000): docs/http.md.
NADIR_METRICS_PORT (none: no metrics), NADIR_METRICS_HOST (NADIR_HOST): Prometheus' /metrics
on its own port, one scrape for all workers: docs/operations.md.
--workers: processes sharing the port (auto: one per core). Tile rate limits are shared by all
of them; the raster memory budget (NADIR_RASTER_BUDGET_MB) is divided between them.
SIGTERM/SIGINT: stop accepting connections, finish requests in flight, then exit.`,
  async run(args: string[], ctx: CliContext) {
    const { values } = parseCommandArgs(
      args,
      { port: { type: 'string' }, host: { type: 'string' }, workers: { type: 'string' } },
      false,
    );
    const port = values.port === undefined ? ctx.config.port : wholeNumber('--port', values.port, 0, 65535);
    const workers = values.workers === undefined ? ctx.config.workers : parseWorkers(values.workers);
    if (workers > 1 && !isClusterWorker()) {
      ctx.stderr.write(`nadir: starting ${workers} worker processes on port ${port}\n`);
      // One scrape for all of them: the primary answers with its workers' metrics summed.
      const { metrics } = ctx.config;
      const endpoint = metrics && (await startMetricsEndpoint(clusterScrape(), metrics.host, metrics.port));
      try {
        return await superviseWorkers(workers, (line) => ctx.stderr.write(`${line}\n`));
      } finally {
        await endpoint?.close();
      }
    }
    let services: Services;
    if (isClusterWorker()) {
      const rasterBudgetMb = Math.max(64, Math.floor(ctx.config.rasterBudgetMb / workers));
      const config = { ...ctx.config, workers, rasterBudgetMb };
      // With Redis every worker counts there; without, the primary holds the counts (rate-lease.ts).
      const rateLimiter = config.redisUrl ? undefined : new LeasedRateLimiter(leaseFromPrimary(), workers);
      services = await createServices(config, systemClock, { rateLimiter });
    } else {
      services = await ctx.services();
    }
    try {
      const app = await buildServer(services);
      const address = await app.listen({ port, host: values.host ?? ctx.config.host });
      let metricsEndpoint: Promise<MetricsEndpoint | undefined> = Promise.resolve(undefined);
      // Before the line below: whoever reads it may signal at once, and a signal that comes before
      // its handler kills the process (no request finished, exit by signal).
      const stopped = new Promise<void>((resolve) => {
        const stop = async () => {
          await app.close();
          await (await metricsEndpoint.catch(() => undefined))?.close();
          resolve();
        };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
      if (!isClusterWorker()) ctx.stderr.write(`nadir listening on ${address}\n`);
      const { metrics } = services;
      if (metrics && isClusterWorker()) shareWithPrimary(metrics.registry);
      else if (metrics && ctx.config.metrics) {
        const { host, port } = ctx.config.metrics;
        metricsEndpoint = startMetricsEndpoint(registryScrape(metrics.registry), host, port);
        // A port that cannot be had fails the start, as before.
        ctx.stderr.write(`nadir metrics on http://${host}:${(await metricsEndpoint)?.port}/metrics\n`);
      }
      await stopped;
    } finally {
      if (isClusterWorker()) {
        await services.close();
        // The channel to the primary would keep this process alive after its server closed.
        process.disconnect?.();
      }
    }
    return 0;
  },
};

function parseWorkers(text: string): number {
  if (text === 'auto') return availableParallelism();
  const workers = Number(text);
  if (!/^\d+$/.test(text) || workers < 1 || workers > 64) {
    throw new UsageError(`--workers must be 1..64 or auto, got ${JSON.stringify(text)}`);
  }
  return workers;
}
