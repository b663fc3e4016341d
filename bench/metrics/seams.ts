/**
 * The recording itself, timed in this process on the compiled code (load/compiled.ts): what the
 * HTTP entrance (http-metrics.ts) and the tile core's observer (measured-parts.ts) add to one
 * answer, with a stand-in request and response. On a shared machine the servers' CPU per answer
 * moves by more than the few per cent the issue allows; this figure does not, and says what the
 * on/off comparison over HTTP should find.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as HttpMetricsModule from '../../src/metrics/http-metrics.js';
import type * as PartsModule from '../../src/metrics/measured-parts.js';
import type * as MetricsModule from '../../src/metrics/nadir-metrics.js';
import type { TileAnswer } from '../../src/tiles/tile-responder.js';
import { importCompiled } from '../load/compiled.js';

export interface SeamCosts {
  /** ns per answer: the entrance's clock read, listener and counting (a 'finish' emitted either way). */
  httpNs: number;
  /** ns per answer: the tile core's observer on a pass-through answer. */
  tileObserverNs: number;
}

/** ns per call of `work`, the best of a few timed batches (the least disturbed by the machine). */
function nsPerCall(work: (i: number) => void, calls: number): number {
  for (let i = 0; i < calls; i++) work(i); // warm-up: optimised before it is timed
  let best = Number.POSITIVE_INFINITY;
  for (let batch = 0; batch < 7; batch++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) work(i);
    best = Math.min(best, Number(process.hrtime.bigint() - started) / calls);
  }
  return best;
}

export async function measureSeams(): Promise<SeamCosts> {
  const { NadirMetrics } = await importCompiled<typeof MetricsModule>('metrics/nadir-metrics.js');
  const { HttpMetrics } = await importCompiled<typeof HttpMetricsModule>('metrics/http-metrics.js');
  const { tileObserver } = await importCompiled<typeof PartsModule>('metrics/measured-parts.js');
  const metrics = new NadirMetrics();
  const request = { url: '/tiles/v3/Vert/18/66000/105000.jpg?apikey=x' } as IncomingMessage;
  const answer = (response: ServerResponse) => {
    response.statusCode = 200;
    response.emit('finish');
  };
  const response = () => Object.assign(new EventEmitter(), { statusCode: 0 }) as unknown as ServerResponse;
  const calls = 200_000;
  const measured = new HttpMetrics(metrics).handler((_, res) => answer(res));
  const bare = (_: IncomingMessage, res: ServerResponse) => answer(res);
  const withMetrics = nsPerCall(() => measured(request, response()), calls);
  const without = nsPerCall(() => bare(request, response()), calls);
  const observer = tileObserver(metrics);
  const tile = {
    status: 200,
    headers: [],
    body: Buffer.alloc(20_000),
    timings: [['passthrough', 0]],
  } as unknown as TileAnswer;
  const observed = nsPerCall(() => observer.answered(tile), calls * 5);
  return { httpNs: Math.max(0, withMetrics - without), tileObserverNs: observed };
}
