/**
 * Tracing's configuration from OpenTelemetry's standard variables (parsed with the rest of the
 * config, config.ts): off unless they name an OTLP endpoint, and only OTLP over HTTP (JSON or
 * protobuf), which is what collectors (the OpenTelemetry Collector, Jaeger, Tempo) take on 4318.
 */
import { NadirError } from '../errors.js';

export interface TracingConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  /** OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, `name=value,...` (an API key of the tracing vendor). */
  headers: Record<string, string>;
  /** OTEL_SERVICE_NAME, default `nadir`. */
  serviceName: string;
  /** OTEL_TRACES_SAMPLER_ARG with traceidratio samplers: the share of new traces kept, 0..1. */
  ratio: number;
  /** OTEL_BSP_SCHEDULE_DELAY: how long finished spans wait to be sent together, ms (default 5000). */
  exportDelayMs: number;
}

function bad(variable: string, message: string, value: string): never {
  throw new NadirError('INVALID_CONFIG', `${variable} ${message}, got ${JSON.stringify(value)}`, { variable });
}

function headersOf(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

/** undefined (tracing off) unless an OTLP endpoint is named and nothing turns tracing off. */
export function parseTracingConfig(env: NodeJS.ProcessEnv): TracingConfig | undefined {
  if (env.OTEL_SDK_DISABLED === 'true') return undefined;
  const exporter = env.OTEL_TRACES_EXPORTER || 'otlp';
  if (exporter === 'none') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!traces && !base) return undefined;
  if (exporter !== 'otlp') bad('OTEL_TRACES_EXPORTER', 'must be otlp or none (nadir exports OTLP over HTTP)', exporter);
  const url = traces || `${(base as string).replace(/\/+$/, '')}/v1/traces`;
  if (!/^https?:\/\/[^\s/]+/.test(url)) bad('OTEL_EXPORTER_OTLP_ENDPOINT', 'must be an http(s) URL', url);
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    bad('OTEL_EXPORTER_OTLP_PROTOCOL', 'must be http/protobuf or http/json (no gRPC)', protocol);
  }
  const sampler = env.OTEL_TRACES_SAMPLER || 'parentbased_always_on';
  let ratio = 1;
  if (sampler.endsWith('traceidratio')) {
    ratio = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
    if (!(ratio >= 0 && ratio <= 1)) bad('OTEL_TRACES_SAMPLER_ARG', 'must be a number from 0 to 1', String(ratio));
  } else if (sampler.endsWith('always_off')) ratio = 0;
  return {
    url,
    protocol,
    headers: { ...headersOf(env.OTEL_EXPORTER_OTLP_HEADERS), ...headersOf(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    serviceName: env.OTEL_SERVICE_NAME || 'nadir',
    ratio,
    exportDelayMs: /^\d+$/.test(env.OTEL_BSP_SCHEDULE_DELAY ?? '') ? Number(env.OTEL_BSP_SCHEDULE_DELAY) : 5_000,
  };
}
