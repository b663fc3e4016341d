import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ApiFailure, failure, failureFromError } from './error-table.js';
import { loggablePath } from './log-safety.js';
import { setStandardHeaders } from './request-lifecycle.js';
import { MAX_PATH_SEGMENT } from './schemas.js';

/**
 * Wires the error table into every way fastify can fail a request, so that no answer is ever
 * fastify's default shape, an HTML page or a stack trace.
 */

export const JSON_TYPE = 'application/json; charset=utf-8';
/**
 * Every route is GET (spec: "All endpoints use HTTP GET"); HEAD comes with each GET route. One
 * extension takes POST as well: the STAC API's item search (POST /stac/v1/search, with a body).
 */
const ROUTE_METHODS = ['GET', 'HEAD', 'POST'] as const;

export function sendFailure(reply: FastifyReply, answer: ApiFailure): FastifyReply {
  return reply.code(answer.status).headers(answer.headers).type(JSON_TYPE).send(answer.body);
}

function pathOf(url: string): string {
  const path = url.split('?', 1)[0] ?? url;
  // The same rule as the log: a message may end up in a client's or a proxy's log.
  const shown = loggablePath(path);
  return shown.length > 200 ? `${shown.slice(0, 200)}...` : shown;
}

function methodsAllowedFor(app: FastifyInstance, path: string): string[] {
  return ROUTE_METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
}

function notFound(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?', 1)[0] ?? request.url;
  const allowed = methodsAllowedFor(app, path);
  if (allowed.length > 0 && request.method === 'OPTIONS') {
    // CORS preflight, e.g. for a browser sending `Authorization: Apikey ...`.
    return reply
      .code(204)
      .headers({
        allow: [...allowed, 'OPTIONS'].join(', '),
        'access-control-allow-methods': allowed.join(', '),
        'access-control-allow-headers': 'Authorization, Content-Type, X-Request-Id',
        'access-control-max-age': '86400',
      })
      .send();
  }
  // A route of this method that found nothing to serve (the docs' static files refuse
  // `..%2F..%2Fetc%2Fpasswd`, say) is a 404: 405 would say the method is wrong.
  if (allowed.length > 0 && !(allowed as string[]).includes(request.method)) {
    reply.header('allow', allowed.join(', '));
    return sendFailure(
      reply,
      failure('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${pathOf(path)}; use ${allowed.join(' or ')}`),
    );
  }
  return sendFailure(reply, failure('NOT_FOUND', `No endpoint ${request.method} ${pathOf(path)}`));
}

/** fastify `frameworkErrors`: URLs it cannot route (bad percent-encoding, over-long segments). */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  setStandardHeaders(request, reply);
  let message = `Malformed request: ${STATUS_CODES[error.statusCode ?? 400] ?? 'bad request'}`;
  if (error.code === 'FST_ERR_BAD_URL') message = 'Malformed URL: the path is not valid percent-encoding';
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    message = `Malformed URL: a path segment is longer than ${MAX_PATH_SEGMENT} characters`;
  }
  sendFailure(reply, failure('BAD_REQUEST', message));
}

/**
 * The raw answer to a request node's HTTP parser rejects before anything else sees it, or a head
 * that timed out: node's status for it (its default `clientError` answers), as the JSON of the
 * error table. api/http/http-server.ts decides whether it is written (node's rules) and closes.
 */
export function clientErrorAnswer(error: NodeJS.ErrnoException & { rawPacket?: unknown }): string {
  let answer = failure('BAD_REQUEST', 'Malformed HTTP request');
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') answer = failure('REQUEST_TIMEOUT', 'Request not received in time');
  if (error.code === 'HPE_HEADER_OVERFLOW') answer = failure('HEADERS_TOO_LARGE', 'Request headers are too large');
  if (error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
    answer = failure('CONTENT_TOO_LARGE', 'Chunk extensions are too large');
  }
  const body = JSON.stringify(answer.body);
  // The answer to a HEAD has no body, even when the rest of its head was refused: a client
  // would read the body as the start of the next answer.
  const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  return (
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\nConnection: close\r\nContent-Type: ${JSON_TYPE}\r\n` +
    `X-Request-Id: ${randomUUID()}\r\nServer-Timing: total;dur=0\r\nAccess-Control-Allow-Origin: *\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${head ? '' : body}`
  );
}

/**
 * The answer to a request that failed with `error`, and its log line: the cause of a 500 is only
 * ever in the log (the answer names the request id to find it). `log` carries the request id.
 */
export function answerToFailure(error: unknown, requestId: string, log: FastifyBaseLogger): ApiFailure {
  const answer = failureFromError(error, requestId);
  if (answer.body.code === 'INTERNAL') log.error({ err: error }, 'request failed');
  else if (answer.status >= 500) {
    const cause = error instanceof Error ? error.cause : undefined;
    log.warn({ code: answer.body.code, ...(cause ? { err: cause } : {}) }, answer.body.error);
  }
  return answer;
}

/**
 * A request target that is not a path: `*` (asterisk-form, for OPTIONS of the whole server) is
 * the one node's parser lets through besides paths and absolute URLs. fastify's router would
 * route it somewhere (`GET *` got the map page).
 */
function isPathTarget(url: string): boolean {
  return url.startsWith('/') || /^https?:\/\//i.test(url);
}

export function installErrorHandling(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!isPathTarget(request.raw.url ?? '')) {
      return sendFailure(reply, failure('BAD_REQUEST', 'The request target must be a path, such as /health'));
    }
    // A method no route of this path takes is answered (405 with Allow, 404, or a CORS
    // preflight's 204) before fastify would wait for a body to parse it, as at once as node:http
    // would: a body sent slowly or never does not hold the answer, and a bad body does not turn it
    // into a 400 or 413. Only a POST route (STAC's search) reads a body.
    if (request.method !== 'GET' && request.method !== 'HEAD' && request.is404) {
      return notFound(app, request, reply);
    }
  });
  app.setErrorHandler((error, request, reply) => sendFailure(reply, answerToFailure(error, request.id, request.log)));
  app.setNotFoundHandler((request, reply) => notFound(app, request, reply));
}
