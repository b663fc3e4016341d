/**
 * HTTP request metrics for every answer the server gives, whichever entrance gave it: the tile and
 * coverage lanes before fastify (src/api/http/lane-entrance.ts), fastify's routes, and the answers
 * node:http's own server gives (http-server.ts). So they are counted at the one place every request
 * passes, the node:http handler, when the response finishes.
 *
 * Cheap on purpose (the budget is 3% of a pass-through tile's CPU): one clock read, one
 * shared 'finish' listener, two Map lookups and a few additions per request (series.ts says why
 * not prom-client's own counters).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { NadirMetrics } from './nadir-metrics.js';
import { markLaneRoute, routeOf } from './route-label.js';
import type { CounterSeries, HistogramSeries } from './series.js';

type NodeHandler = (request: IncomingMessage, response: ServerResponse) => void;

const STARTED = Symbol('nadir.metrics.started');

interface Measured extends ServerResponse {
  [STARTED]: number;
}

/** One route's series: its latency, and its answers by status. */
interface RouteSeries {
  duration: HistogramSeries;
  statuses: Map<number, CounterSeries>;
}

export class HttpMetrics {
  readonly #metrics: Pick<NadirMetrics, 'httpRequests' | 'httpDuration'>;
  readonly #routes = new Map<string, RouteSeries>();
  readonly #finished: (this: Measured) => void;

  constructor(metrics: Pick<NadirMetrics, 'httpRequests' | 'httpDuration'>) {
    this.#metrics = metrics;
    const self = this;
    // One listener for every response (`this` is the response): no closure per request.
    this.#finished = function (this: Measured) {
      self.#record(this);
    };
  }

  /** `handler` (the lanes, then fastify), with every answer counted when it finishes. */
  handler(next: NodeHandler): NodeHandler {
    const finished = this.#finished;
    return (request, response) => {
      const measured = response as Measured;
      measured[STARTED] = performance.now();
      markLaneRoute(response, request.url ?? '');
      // 'finish' comes once; `on` spares the wrapper `once` would make per request.
      response.on('finish', finished);
      next(request, response);
    };
  }

  #record(response: Measured): void {
    const seconds = (performance.now() - response[STARTED]) / 1000;
    const route = routeOf(response);
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
