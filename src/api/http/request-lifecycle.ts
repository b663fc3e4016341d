import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loggableUrl } from './log-safety.js';

/**
 * What every response carries whatever route (or none) answered it: `X-Request-Id`,
 * `Server-Timing`, CORS headers, and one access-log line with a redacted URL.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** `name;dur=ms` entries for Server-Timing, added by handlers via addServerTiming. */
    serverTimings: string[] | null;
  }
}

/**
 * Incoming ids we keep (and echo, and log): what tracing systems send, and nothing that could hold
 * a secret or forge a log line. A key (`nadir_<12 hex>_<43 base64url>`) or a token
 * (`t1.<id>.<base64url>`), or any 12-character piece of one, is neither of these:
 * - hex digits in groups joined by single dashes, at most 64 characters: UUIDs, W3C trace ids and
 *   traceparent values, nginx's $request_id. The only hex run a key has is its public key id; a
 *   run of 12 hex digits turns up in a random base64url secret with a probability of about 1e-4,
 *   and only its holder could cut it out and send it;
 * - anything short: at most 11 of `A-Z a-z 0-9 . _ : -`, too short to be a 12-character piece.
 * Anything else (a ULID, `trace-4bf92f35.a3ce`, a key) is replaced by a fresh UUID.
 */
const HEX_REQUEST_ID = /^(?=.{1,64}$)[0-9A-Fa-f]+(?:-[0-9A-Fa-f]+)*$/;
const SHORT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,11}$/;

export function isSafeRequestId(id: string): boolean {
  return HEX_REQUEST_ID.test(id) || SHORT_REQUEST_ID.test(id);
}

/** fastify `genReqId`: the caller's `X-Request-Id` when safe to keep, else a fresh UUID. */
export function requestIdFor(request: IncomingMessage): string {
  return requestIdOf(request.headers['x-request-id']);
}

/** The id for a request whose `X-Request-Id` header (if any) is `incoming`. */
export function requestIdOf(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && isSafeRequestId(incoming) ? incoming : randomUUID();
}

/** Browsers may call the API from any origin; it uses no cookies, so `*` exposes nothing. */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'X-Request-Id, Server-Timing, Retry-After, Content-Disposition, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Survey-Ids',
  'timing-allow-origin': '*',
};

const CORS_HEADER_PAIRS: readonly string[] = Object.entries(CORS_HEADERS).flat();

/** The headers every answer starts with, as name, value, ... (for answers written without fastify). */
export function standardHeaderPairs(requestId: string): string[] {
  return ['x-request-id', requestId, ...CORS_HEADER_PAIRS];
}

/** One Server-Timing entry (a step that took no time, such as a lane's mark, says 0: toFixed costs). */
export function serverTiming(name: string, milliseconds: number): string {
  return milliseconds === 0 ? `${name};dur=0` : `${name};dur=${milliseconds.toFixed(2)}`;
}

export function addServerTiming(request: FastifyRequest, name: string, milliseconds: number): void {
  request.serverTimings ??= [];
  request.serverTimings.push(serverTiming(name, milliseconds));
}

/** Runs one step of a handler and reports its duration in Server-Timing, even when it throws. */
export async function timedStep<T>(request: FastifyRequest, name: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    addServerTiming(request, name, performance.now() - started);
  }
}

/**
 * Aborted when the client closes the connection before its answer was sent: a render that is
 * still waiting for admission gives up its place, one under way stops at its next check.
 */
export function abandonedSignal(reply: FastifyReply): AbortSignal {
  const abandoned = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) abandoned.abort();
  });
  return abandoned.signal;
}

export function serverTimingHeader(request: FastifyRequest, reply: FastifyReply): string {
  return [...(request.serverTimings ?? []), `total;dur=${reply.elapsedTime.toFixed(2)}`].join(', ');
}

/** For the few answers sent outside the hooks (fastify's framework errors). */
export function setStandardHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(CORS_HEADERS);
  reply.header('x-request-id', request.id);
  reply.header('server-timing', serverTimingHeader(request, reply));
}

export interface AccessLogFields {
  /** Given when the logger does not carry it already (answers written without fastify). */
  requestId?: string;
  method: string | undefined;
  url: string;
  statusCode: number;
  durationMs: number;
}

/** The one access-log line per request, with only the safe parts of the URL (log-safety.ts), built only when the level keeps it. */
export function logAccess(log: FastifyBaseLogger, fields: AccessLogFields): void {
  const enabled = (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info') ?? true;
  if (!enabled) return;
  log.info({ ...fields, url: loggableUrl(fields.url), durationMs: Number(fields.durationMs.toFixed(2)) }, 'request');
}

export function installRequestLifecycle(app: FastifyInstance): void {
  app.decorateRequest('serverTimings', null);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.headers(CORS_HEADERS);
  });
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('server-timing', serverTimingHeader(request, reply));
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    logAccess(request.log, {
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      durationMs: reply.elapsedTime,
    });
  });
}
