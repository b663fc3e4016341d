/**
 * `/metrics` on a port of its own (NADIR_METRICS_PORT, docs/operations.md): never on the API's
 * port, so nothing an API key reaches (nginx proxies only the API port) can read it, and a scrape
 * never waits behind tile traffic or counts as API traffic. It answers GET /metrics and nothing else.
 *
 * With `nadir serve --workers N` the primary listens and answers with the sum of its workers'
 * registries (prom-client's AggregatorRegistry asks each worker over the cluster IPC channel), so
 * Prometheus scrapes one target per server, however many processes it runs.
 */
import { createServer, type Server } from 'node:http';
import { AggregatorRegistry, type Registry } from 'prom-client';

export interface MetricsEndpoint {
  /** The port it listens on (the kernel's choice when asked for 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** The scrape body and its content type. */
export interface Scrape {
  contentType: string;
  text(): Promise<string>;
}

export function registryScrape(registry: Registry): Scrape {
  return { contentType: registry.contentType, text: () => registry.metrics() };
}

/** In the primary of `serve --workers`: its workers' registries, summed, at every scrape. */
export function clusterScrape(): Scrape {
  const aggregator = new AggregatorRegistry();
  return { contentType: aggregator.contentType, text: () => aggregator.clusterMetrics() };
}

/** In a `serve --workers` worker: answers the primary's requests for `registry`'s metrics. */
export function shareWithPrimary(registry: Registry): void {
  // The constructor installs the worker's listener (prom-client's cluster.js); the registries
  // it answers with are the ones named here, never prom-client's global default.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

export async function startMetricsEndpoint(scrape: Scrape, host: string, port: number): Promise<MetricsEndpoint> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics here\n');
      return;
    }
    scrape.text().then(
      (text) => response.writeHead(200, { 'content-type': scrape.contentType }).end(text),
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
