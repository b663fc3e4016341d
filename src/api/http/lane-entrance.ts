import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
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
  take(request: IncomingMessage, url: string): Promise<Taken | undefined>;
  answer(request: IncomingMessage, response: ServerResponse, taken: Taken): Promise<void> | void;
}

/**
 * A node:http request handler: the lane first, `fallback` (fastify, or the next lane) for what it
 * declines. A failure while deciding (the account store unreadable, say) is fastify's to answer
 * and log; one while answering, after the head may have gone out, ends the connection.
 */
export function laneHandler<Taken>(lane: Lane<Taken>, fallback: NodeHandler): NodeHandler {
  return (request, response) => {
    const url = request.url ?? '';
    if (!lane.wants(request.method, url)) {
      fallback(request, response);
      return;
    }
    lane
      .take(request, url)
      .then(
        (taken) => (taken ? lane.answer(request, response, taken) : fallback(request, response)),
        () => fallback(request, response),
      )
      .catch((error: unknown) => {
        lane.log?.error({ err: error }, `${lane.name} failed`);
        response.destroy();
      });
  };
}
