/**
 * A span per ingest job in `nadir worker` (a trace of its own: a job is not part of any request),
 * from the queue's job events (ingest-queue.ts): begun when the worker takes the job, ended when
 * it is done or failed, with the error.
 */
import { type Span, SpanStatusCode } from '@opentelemetry/api';
import type { JobEvent } from '../ingest/ingest-queue.js';
import type { Tracing } from './tracing.js';

export function ingestJobSpans(tracing: Pick<Tracing, 'begin'>): (event: JobEvent) => void {
  // By label: a worker runs a few jobs at once, each its own output, so its own label.
  const open = new Map<string, Span[]>();
  return ({ state, label, error }) => {
    if (state === 'started') {
      const span = tracing.begin('ingest.job', { 'messaging.system': 'pg-boss', 'nadir.ingest.job': label });
      open.set(label, [...(open.get(label) ?? []), span]);
      return;
    }
    const spans = open.get(label) ?? [];
    const span = spans.shift();
    if (spans.length === 0) open.delete(label);
    if (!span) return;
    if (state === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    span.end();
  };
}
