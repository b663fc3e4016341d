/**
 * HTTP request metrics for every answer the server gives, whichever entrance gave it: the tile and
 * coverage lanes before fastify (src/api/http/lane-entrance.ts), fastify's routes, and the answers
 * node:http's own server gives (http-server.ts). So they are counted at the one place every request
 * passes, the node:http handler, when the response finishes.
 *
 * Cheap on purpose (the budget is 3% of a pass-through tile's CPU): one clock read, one
 * 'finish' listener, two Map lookups and a few additions per request (series.ts says why not
 * prom-client's own counters). What a request's record needs is kept in that listener's closure,
 * not on the response: properties added to a ServerResponse before node writes it cost more than
 * the closure (route-label.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { NadirMetrics } from './nadir-metrics.js';
import { laneRouteOf, routeOf } from './route-label.js';
import type { CounterSeries, HistogramSeries } from './series.js';

type NodeHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** One route's series: its latency, and its answers by status. */
interface RouteSeries {
  duration: HistogramSeries;
  statuses: Map<number, CounterSeries>;
}

export class HttpMetrics {
  readonly #metrics: Pick<NadirMetrics, 'httpRequests' | 'httpDuration'>;
  readonly #routes = new Map<string, RouteSeries>();

  constructor(metrics: Pick<NadirMetrics, 'httpRequests' | 'httpDuration'>) {
    this.#metrics = metrics;
  }

  /** `handler` (the lanes, then fastify), with every answer counted when it finishes. */
  handler(next: NodeHandler): NodeHandler {
    return (request, response) => {
      const started = performance.now();
      const laneRoute = laneRouteOf(request.url ?? '');
      // 'finish' comes once; `on` spares the wrapper `once` would make per request.
      response.on('finish', () => this.#record(response, started, laneRoute));
      next(request, response);
    };
  }

  #record(response: ServerResponse, started: number, laneRoute: string | undefined): void {
    const seconds = (performance.now() - started) / 1000;
    const route = routeOf(response, laneRoute);
    let series = this.#routes.get(route);
    if (!series) {
      series = { duration: this.#metrics.httpDuration.series({ route }), statuses: new Map() };
      this.#routes.set(route, series);
    }
    const status = response.statusCode;
    let answered = series.statuses.get(status);
    if (!answered) {
      answered = this.#metrics.httpRequests.series({ route, status: String(status) });
      series.statuses.set(status, answered);
    }
    answered.value++;
    series.duration.observe(seconds);
  }
}
