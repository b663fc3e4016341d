import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpTimeouts } from '../../config/config.js';
import { clientErrorAnswer, JSON_TYPE } from './error-handling.js';
import { type ApiFailure, failure } from './error-table.js';
import { rawHeader } from './raw-header.js';
import { requestIdFor, standardHeaderPairs } from './request-lifecycle.js';

/**
 * How nadir's node:http server reads requests (docs/http.md): node's own parser and its own
 * timeouts, set from the parsed config. The one place these options are made, so that the HTTP
 * conformance test (test/api/http-conformance.test.ts) builds its plain node:http reference
 * server from exactly the same ones.
 */
export function httpServerOptions(timeouts: HttpTimeouts): ServerOptions {
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = timeouts;
  return {
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    // node looks for expired heads every 30 s by default, so a slow head could outlive a 60 s
    // headersTimeout by half a minute: look every second (a quarter of a shorter timeout).
    connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
  };
}

export type NodeHandler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * nadir's node:http server: `handler` gets every request node's parser hands over; requests it
 * rejects, heads that time out and CONNECT end their connection as node ends it (ConnectionEnds).
 * What node answers itself before any handler, nadir answers the same way in its JSON shape.
 */
export function createHttpServer(timeouts: HttpTimeouts, handler: NodeHandler): Server {
  const ends = new ConnectionEnds();
  // node's check of Host answers a bare 400: nadir's own (hostChecked) answers the same in JSON.
  const options = { ...httpServerOptions(timeouts), requireHostHeader: false };
  const server = createServer(options, ends.track(hostChecked(handler)));
  // node would write 100 Continue before its Host check could refuse the request: the check first.
  server.on(
    'checkContinue',
    ends.track(
      hostChecked((request, response) => {
        response.writeContinue();
        handler(request, response);
      }),
    ),
  );
  // An Expect other than 100-continue: node's bare 417, in JSON.
  server.on(
    'checkExpectation',
    ends.track(
      hostChecked((request, response) => {
        const answer = failure('EXPECTATION_FAILED', 'The only expectation nadir meets is Expect: 100-continue');
        answerAsNode(request, response, answer, false);
      }),
    ),
  );
  // When the client half-closes, node ends the connection at once, and an answer not given yet
  // is lost; with this (node's own switch, not in its typings) it ends after the answers due, as
  // a handler that answers at once would have them.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // CONNECT is never answered (node destroys the connection), but the answers before it are.
  server.on('connect', (_request: IncomingMessage, socket: Socket) => ends.end(socket, undefined, true));
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    ends.end(socket, clientErrorAnswer(error), error.code !== 'ERR_HTTP_REQUEST_TIMEOUT');
  });
  closeSilentConnectionsWithIdle(server);
  return server;
}

/**
 * Makes `server.closeIdleConnections()` (called by fastify's close and node's server.close())
 * also close connections that have not sent a byte. node counts a new connection as busy until
 * its first request completes (its headers timeout runs from the connect), so a connection opened
 * and never used (a browser's or fetch's spare, a load balancer's TCP check) held a stopping
 * server for the whole headers timeout: 60 s, seen in the two-servers test. Such a connection has
 * no request to finish; one that has sent part of a head is left to finish it, or to time out.
 */
function closeSilentConnectionsWithIdle(server: Server): void {
  // bytesRead, not a 'data' listener: node's parser reads the socket's handle directly.
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
  };
}

/**
 * An answer node:http would give itself, in nadir's shape: the error table's JSON, X-Request-Id,
 * CORS and Server-Timing. Written on the request's own response, so in order with the others.
 */
function answerAsNode(request: IncomingMessage, response: ServerResponse, answer: ApiFailure, close: boolean): void {
  const body = JSON.stringify(answer.body);
  const headers = [
    ...standardHeaderPairs(requestIdFor(request)),
    'server-timing',
    'total;dur=0',
    ...Object.entries(answer.headers).flat(),
    'content-type',
    JSON_TYPE,
    'content-length',
    String(Buffer.byteLength(body)),
  ];
  if (close) headers.push('connection', 'close');
  response.writeHead(answer.status, headers);
  response.end(body);
}

/**
 * node's `requireHostHeader`, with nadir's answer: an HTTP/1.1 request without Host is a 400 and
 * the connection closes after it (RFC 9112 3.2; HTTP/1.0 needs none).
 */
function hostChecked(next: NodeHandler): NodeHandler {
  return (request, response) => {
    // From rawHeaders: `request.headers` would build node's header object for every request, which
    // the lanes never need (raw-header.ts).
    if (request.httpVersion !== '1.1' || rawHeader(request, 'host') !== undefined) next(request, response);
    else answerAsNode(request, response, failure('BAD_REQUEST', 'An HTTP/1.1 request needs a Host header'), true);
  };
}

/** How long answers to requests whose bodies were cut short are waited for (ConnectionEnds.end). */
const INCOMPLETE_GRACE_MS = 2_000;

/** A request node's parser handed over and nadir has not answered yet. */
interface Unanswered {
  request: IncomingMessage;
  response: ServerResponse;
  /** The connection's byte count when it was handed over: requests of one read share it. */
  read: number;
}

/**
 * Ends connections where node:http ends them. node's parser reads each request, but answers come
 * from nadir later than from a handler that answers at once, and node's own reaction to bad bytes
 * (a parse error, a head too slow, CONNECT) assumes the answers to the requests before them were
 * written already: it writes its error answer (or nothing, for CONNECT) and destroys the
 * connection at once, losing nadir's answers still to come. So those reactions are nadir's here,
 * done as node does them with a handler that answers at once:
 *  - the requests parsed in earlier reads of the connection are answered first;
 *  - of those parsed in the same read as the bad bytes, node has written the answer to the first
 *    (its handler ran before the parser went on) and not yet the others, which die with the
 *    connection: only the first is answered;
 *  - node's error answer (the JSON 400, 408, 413 or 431 of `clientErrorAnswer`) follows only when
 *    no answer was in flight, that is no request came in that read, and the connection is still
 *    writable (an answer with `Connection: close` ends it);
 *  - then the connection closes.
 */
class ConnectionEnds {
  readonly #unanswered = new WeakMap<Socket, Unanswered[]>();
  readonly #ending = new WeakSet<Socket>();
  /**
   * Unlists an answered request: one listener for every response, called by 'finish' with the
   * response as `this` (`once` would make a wrapper and a closure for every request). 'finish'
   * comes once; the response is dropped with its request, listener and all.
   */
  readonly #answered: (this: ServerResponse) => void;

  constructor() {
    const lists = this.#unanswered;
    this.#answered = function answered(this: ServerResponse) {
      const unanswered = lists.get(this.req.socket as Socket);
      if (!unanswered) return;
      const index = unanswered.findIndex((entry) => entry.response === this);
      if (index !== -1) unanswered.splice(index, 1);
    };
  }

  /** `handler`, with every request listed until it is answered. */
  track(handler: NodeHandler): NodeHandler {
    return (request, response) => {
      const { socket } = request;
      let unanswered = this.#unanswered.get(socket);
      if (!unanswered) {
        unanswered = [];
        this.#unanswered.set(socket, unanswered);
      }
      unanswered.push({ request, response, read: socket.bytesRead });
      // An answer cut short by a closed connection stays listed: that connection is done with.
      response.on('finish', this.#answered);
      handler(request, response);
    };
  }

  /**
   * Ends `socket` after the answers node would have written, writing `answer` (the raw bytes of an
   * error answer) first where node would. `inRead`: the trouble came in a read of the connection
   * (a parse error, the client's end, CONNECT), not from a timer.
   */
  end(socket: Socket, answer: string | undefined, inRead: boolean): void {
    if (socket.destroyed || this.#ending.has(socket)) return;
    // node's parser repeats its error on every later read: the first one decides.
    this.#ending.add(socket);
    const unanswered = this.#unanswered.get(socket) ?? [];
    // node's own reaction, at once: its error answer unless an answer has begun, and the close.
    const now = () => {
      if (socket.destroyed) return;
      if (answer !== undefined && socket.writable && !unanswered[0]?.response.headersSent) socket.write(answer);
      socket.destroy();
    };
    // A request whose body will never come whole may have a handler waiting for it (nadir's routes
    // do not, but fastify reads the body of some methods before their handler): after a timeout
    // at once, otherwise after a grace.
    if (unanswered.some((entry) => !entry.request.complete)) {
      if (!inRead) {
        now();
        return;
      }
      setTimeout(now, INCOMPLETE_GRACE_MS).unref();
    }
    const read = socket.bytesRead;
    const sameRead = inRead ? unanswered.filter((entry) => entry.read === read) : [];
    const kept = unanswered.filter((entry) => !sameRead.includes(entry));
    const close = () => {
      if (socket.writable) socket.end();
      if (socket.writableFinished) socket.destroy();
      else socket.once('finish', () => socket.destroy());
    };
    const first = sameRead[0];
    if (first) {
      // Answer it, and close before node's own 'finish' listener hands the connection to the
      // next answer in line: those node would have lost.
      first.response.prependOnceListener('finish', close);
      return;
    }
    const answerThenClose = () => {
      if (answer !== undefined && socket.writable) socket.write(answer);
      close();
    };
    // After node's own 'finish' listener, which ends the connection after `Connection: close`.
    const last = kept.at(-1);
    if (last) last.response.once('finish', answerThenClose);
    else answerThenClose();
  }
}
