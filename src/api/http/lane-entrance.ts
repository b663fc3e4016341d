import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Decided } from '../../decided.js';
import type { NodeHandler } from './http-server.js';

/**
 * What a lane before fastify (tile-lane.ts, coverage-lane.ts) is made of: a cheap test of method
 * and URL, a decision (`take`: everything the route would check, or undefined to leave the
 * request to fastify) and the answer to what it took.
 */
export interface Lane<Taken> {
  /** Used in the log line of a failed answer. */
  readonly name: string;
  /** Known once fastify is built; the lane takes nothing before (nothing to log with). */
  readonly log: FastifyBaseLogger | undefined;
  wants(method: string | undefined, url: string): boolean;
  /** At once, or once it knows (a key the store must look up). */
  take(request: IncomingMessage, url: string): Decided<Taken | undefined>;
  answer(request: IncomingMessage, response: ServerResponse, taken: Taken): Decided<void>;
}

/**
 * A node:http request handler: the lane first, `fallback` (fastify, or the next lane) for what it
 * declines. A failure while deciding (the account store unreadable, say) is fastify's to answer
 * and log; one while answering, after the head may have gone out, ends the connection. What the
 * lane decides and answers at once is answered in node's own call to this handler, as a bare
 * node:http handler would: no promise, no later turn of the microtask queue.
 */
export function laneHandler<Taken>(lane: Lane<Taken>, fallback: NodeHandler): NodeHandler {
  const broken = (response: ServerResponse, error: unknown) => {
    lane.log?.error({ err: error }, `${lane.name} failed`);
    response.destroy();
  };
  const answer = (request: IncomingMessage, response: ServerResponse, taken: Taken | undefined) => {
    if (!taken) {
      fallback(request, response);
      return;
    }
    let answering: Decided<void>;
    try {
      answering = lane.answer(request, response, taken);
    } catch (error) {
      broken(response, error);
      return;
    }
    if (answering instanceof Promise) answering.catch((error: unknown) => broken(response, error));
  };
  return (request, response) => {
    const url = request.url ?? '';
    if (!lane.wants(request.method, url)) {
      fallback(request, response);
      return;
    }
    let taken: Decided<Taken | undefined>;
    try {
      taken = lane.take(request, url);
    } catch {
      fallback(request, response);
      return;
    }
    if (taken instanceof Promise) {
      taken
        .then(
          (decided) => answer(request, response, decided),
          () => fallback(request, response),
        )
        .catch((error: unknown) => broken(response, error));
    } else answer(request, response, taken);
  };
}
