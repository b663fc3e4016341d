import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpTimeouts } from '../config/config.js';
import { clientErrorAnswer } from './error-handling.js';

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
 * `expectations` gets the requests with an `Expect` other than 100-continue (node answers those
 * with a bare 417 itself otherwise).
 */
export function createHttpServer(timeouts: HttpTimeouts, handler: NodeHandler, expectations?: NodeHandler): Server {
  const ends = new ConnectionEnds();
  const server = createServer(httpServerOptions(timeouts), ends.track(handler));
  // When the client half-closes, node ends the connection at once, and an answer not given yet
  // is lost; with this (node's own switch, not in its typings) it ends after the answers due, as
  // a handler that answers at once would have them.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  if (expectations) server.on('checkExpectation', ends.track(expectations));
  // CONNECT is never answered (node destroys the connection), but the answers before it are.
  server.on('connect', (_request: IncomingMessage, socket: Socket) => ends.end(socket, undefined, true));
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    ends.end(socket, clientErrorAnswer(error), error.code !== 'ERR_HTTP_REQUEST_TIMEOUT');
  });
  return server;
}

/** A request node's parser handed over and nadir has not answered yet. */
interface Unanswered {
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

  /** `handler`, with every request listed until it is answered. */
  track(handler: NodeHandler): NodeHandler {
    return (request, response) => {
      const { socket } = request;
      let unanswered = this.#unanswered.get(socket);
      if (!unanswered) {
        unanswered = [];
        this.#unanswered.set(socket, unanswered);
      }
      const entry: Unanswered = { response, read: socket.bytesRead };
      unanswered.push(entry);
      // An answer cut short by a closed connection stays listed: that connection is done with.
      response.once('finish', () => {
        const index = unanswered.indexOf(entry);
        if (index !== -1) unanswered.splice(index, 1);
      });
      handler(request, response);
    };
  }

  /**
   * Ends `socket` after the answers node would have written, writing `answer` (the raw bytes of an
   * error answer) first where node would. `inRead`: the trouble came in a read of the connection
   * (a parse error or CONNECT), not from a timer.
   */
  end(socket: Socket, answer: string | undefined, inRead: boolean): void {
    if (socket.destroyed || this.#ending.has(socket)) return;
    // node's parser repeats its error on every later read: the first one decides.
    this.#ending.add(socket);
    const unanswered = this.#unanswered.get(socket) ?? [];
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
