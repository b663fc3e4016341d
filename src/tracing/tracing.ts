/**
 * OpenTelemetry traces (OTLP over HTTP), when config/otel-config.ts finds an endpoint: a SERVER
 * span per request, whichever entrance answers it (the lanes before fastify too), continuing the
 * caller's W3C `traceparent`; child spans for the catalogue, storage reads, GDAL renders and the
 * tile core's steps; a span per ingest job in `nadir worker`. The current span of a request's
 * async flow is kept in this object's own AsyncLocalStorage, never in OpenTelemetry's global
 * context or a global tracer provider: one Tracing per process, built by the composition root,
 * handed to what it traces. A request's log lines carry its trace id through logFields (a pino
 * mixin).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Attributes,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { TracingConfig } from '../config/otel-config.js';
import { markLaneRoute, routeOf } from '../metrics/route-label.js';
import { packageVersion } from '../version.js';

type NodeHandler = (request: IncomingMessage, response: ServerResponse) => void;

export class Tracing {
  readonly #provider: TracerProvider;
  readonly #tracer: Tracer;
  readonly #current = new AsyncLocalStorage<Span>();
  readonly #propagator = new W3CTraceContextPropagator();

  constructor(config: TracingConfig, serverId: string) {
    const version = packageVersion();
    const exporterConfig = { url: config.url, headers: config.headers };
    const exporter =
      config.protocol === 'http/json' ? new JsonExporter(exporterConfig) : new ProtobufExporter(exporterConfig);
    this.#provider = new TracerProvider({
      resource: resourceFromAttributes({
        'service.name': config.serviceName,
        'service.version': version,
        'service.instance.id': serverId,
      }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.ratio) }),
      spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.exportDelayMs })],
    });
    this.#tracer = this.#provider.getTracer('nadir', version);
  }

  /** `next` (the lanes, then fastify) with a SERVER span around each request, ended when it closes. */
  handler(next: NodeHandler): NodeHandler {
    return (request, response) => {
      const method = request.method ?? 'GET';
      const parent = this.#propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
      const span = this.#tracer.startSpan(
        method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': method,
            'url.scheme': 'http',
            'network.protocol.version': request.httpVersion,
          },
        },
        parent,
      );
      markLaneRoute(response, request.url ?? '');
      response.once('close', () => {
        const route = routeOf(response);
        const status = response.statusCode;
        span.updateName(`${method} ${route}`);
        span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        if (!response.writableFinished) span.setAttribute('nadir.abandoned', true);
        span.end();
      });
      this.#current.run(span, () => next(request, response));
    };
  }

  /** `work` in a child span of the current request's (or a span of its own outside a request, when `root`). */
  child<T>(name: string, attributes: Attributes, work: () => Promise<T>, root = false): Promise<T> {
    const parent = this.#current.getStore();
    if (!parent && !root) return work();
    const context = parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
    const span = this.#tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, context);
    return this.#current.run(span, work).then(
      (result) => {
        span.end();
        return result;
      },
      (error: unknown) => {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
        span.end();
        throw error;
      },
    );
  }

  /**
   * Child spans of the current request for steps a part timed itself (the tile core's
   * `[name, ms]` timings, in order, the last ending now): laid back to back from now backwards.
   */
  stepsJustEnded(prefix: string, steps: readonly (readonly [string, number])[], attributes: Attributes = {}): void {
    const parent = this.#current.getStore();
    if (!parent) return;
    const context = trace.setSpan(ROOT_CONTEXT, parent);
    let end = performance.timeOrigin + performance.now();
    for (let i = steps.length - 1; i >= 0; i--) {
      const [name, ms] = steps[i] as readonly [string, number];
      if (ms <= 0) continue;
      const start = end - ms;
      this.#tracer
        .startSpan(`${prefix}.${name}`, { kind: SpanKind.INTERNAL, attributes, startTime: start }, context)
        .end(end);
      end = start;
    }
  }

  /** A span begun now, outside any request, ended by the caller (an ingest job in `nadir worker`). */
  begin(name: string, attributes: Attributes): Span {
    return this.#tracer.startSpan(name, { kind: SpanKind.CONSUMER, attributes }, ROOT_CONTEXT);
  }

  /** For every log line (pino's mixin): the current request's trace and span ids, if any. */
  logFields(): { traceId?: string; spanId?: string } {
    const span = this.#current.getStore();
    if (!span) return {};
    const { traceId, spanId } = span.spanContext();
    return { traceId, spanId };
  }

  /** Sends what is finished and stops. */
  close(): Promise<void> {
    return this.#provider.shutdown();
  }
}
