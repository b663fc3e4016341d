/**
 * The socket lane: the repeats of remembered tiles answered on the socket, before node:http parses
 * them. A map asks for the same stored tiles again and again, and for those node:http's request
 * and response machinery (parser callbacks, two objects, header validation, stream bookkeeping)
 * cost more than the checks the answer needs (docs/tiles.md has the profile). So every new
 * connection starts here: each request head is read (request-head.ts) and offered to `answer`;
 * while the answers come, they are written straight to the socket. The first request that is not
 * a plain GET, or that `answer` cannot answer at once, hands the connection with every unread byte
 * to node:http, which serves the rest of the connection's life as it always does. A connection
 * is therefore either here, between requests, or node's: never both, and answers keep the order
 * of their requests.
 */
import { type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { MAX_HEAD_BYTES, type RequestHead, readRequestHead } from './request-head.js';

/** An answer: its status, its headers (name, value, ...) but those node:http adds itself, and its body. */
export interface SocketAnswer {
  status: number;
  headers: readonly string[];
  body: Buffer | undefined;
}

/** Answers a request now, or undefined to let node:http (and the routes) answer it. */
export type SocketAnswerer = (request: RequestHead) => SocketAnswer | undefined;

type ConnectionListener = (this: Server, socket: Socket) => void;

const END_OF_HEAD = Buffer.from('\r\n\r\n');

function hasBareLineFeed(bytes: Buffer): boolean {
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) {
    if (at === 0 || bytes[at - 1] !== 0x0d) return true;
  }
  return false;
}

export class SocketLane {
  readonly #server: Server;
  readonly #answer: SocketAnswerer;
  readonly #nodeListener: ConnectionListener;
  /** Connections still here, for closeIdle. */
  readonly #connections = new Set<Connection>();
  /** node:http's Date header, made once a second as node makes it. */
  #dateSecond = -1;
  #date = '';

  private constructor(server: Server, answer: SocketAnswerer, nodeListener: ConnectionListener) {
    this.#server = server;
    this.#answer = answer;
    this.#nodeListener = nodeListener;
  }

  /**
   * Puts the lane in front of node:http's own connection listener. Returns undefined, changing
   * nothing, unless that listener is the only one (something else watching connections would not
   * expect them to be read first).
   */
  static install(server: Server, answer: SocketAnswerer): SocketLane | undefined {
    const listeners = server.listeners('connection');
    if (listeners.length !== 1) return undefined;
    const nodeListener = listeners[0] as ConnectionListener;
    const lane = new SocketLane(server, answer, nodeListener);
    server.removeListener('connection', nodeListener);
    server.on('connection', (socket: Socket) => lane.#accept(socket));
    return lane;
  }

  /**
   * For shutdown, as node's closeIdleConnections does for its own: connections between requests
   * are closed, and one halfway through a request head goes to node:http to be finished there.
   */
  closeIdle(): void {
    for (const connection of this.#connections) connection.closeIdle();
  }

  /**
   * The status line and headers as node:http writes them for a kept-alive answer: the answer's
   * headers in order, then its own Date, Connection and Keep-Alive.
   */
  #head(answer: SocketAnswer): string {
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.#dateSecond) {
      this.#dateSecond = second;
      this.#date = new Date(second * 1000).toUTCString();
    }
    const { status, headers } = answer;
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n`;
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
    head += `Date: ${this.#date}\r\nConnection: keep-alive\r\n`;
    const keepAlive = this.#server.keepAliveTimeout;
    if (keepAlive > 0) head += `Keep-Alive: timeout=${Math.floor(keepAlive / 1000)}\r\n`;
    return `${head}\r\n`;
  }

  #accept(socket: Socket): void {
    const write = (answer: SocketAnswer) => {
      socket.cork();
      socket.write(this.#head(answer), 'latin1');
      if (answer.body) socket.write(answer.body);
      socket.uncork();
    };
    const connection = new Connection(socket, this.#server, this.#answer, write, (leftover) =>
      this.#handOver(socket, leftover),
    );
    connection.finished = () => this.#connections.delete(connection);
    this.#connections.add(connection);
    connection.start();
  }

  /** node:http takes the connection as if it had just been accepted, and reads `leftover` first. */
  #handOver(socket: Socket, leftover: Buffer | undefined): void {
    this.#nodeListener.call(this.#server, socket);
    if (leftover && leftover.length > 0) socket.emit('data', leftover);
    if (!socket.destroyed) socket.resume();
  }
}

class Connection {
  readonly #socket: Socket;
  readonly #server: Server;
  readonly #answer: SocketAnswerer;
  readonly #write: (answer: SocketAnswer) => void;
  readonly #handOver: (leftover: Buffer | undefined) => void;
  /** Bytes received and not yet answered: part of a head, or requests waiting for a drain. */
  #pending: Buffer | undefined;
  #waitingForDrain = false;
  #done = false;
  finished: () => void = () => undefined;

  readonly #onData = (chunk: Buffer) => {
    this.#pending = this.#pending ? Buffer.concat([this.#pending, chunk]) : chunk;
    this.#serve();
  };
  readonly #onDrain = () => {
    this.#waitingForDrain = false;
    this.#socket.resume();
    this.#serve();
  };
  readonly #onEnd = () => {
    // The client sent all it will; every answer it asked for is written (they are written at once).
    if (this.#pending) this.#socket.destroy();
    else this.#socket.end();
  };
  readonly #onTimeout = () => this.#socket.destroy();
  readonly #onError = () => this.#socket.destroy();
  readonly #onClose = () => this.#finish();

  constructor(
    socket: Socket,
    server: Server,
    answer: SocketAnswerer,
    write: (answer: SocketAnswer) => void,
    handOver: (leftover: Buffer | undefined) => void,
  ) {
    this.#socket = socket;
    this.#server = server;
    this.#answer = answer;
    this.#write = write;
    this.#handOver = handOver;
  }

  /** Every listener the lane puts on the socket, so that leaving takes them all off. */
  readonly #listeners: [string, Parameters<NodeJS.EventEmitter['on']>[1]][] = [
    ['data', this.#onData],
    ['drain', this.#onDrain],
    ['end', this.#onEnd],
    ['timeout', this.#onTimeout],
    ['error', this.#onError],
    ['close', this.#onClose],
  ];

  start(): void {
    const socket = this.#socket;
    for (const [event, listener] of this.#listeners) socket.on(event, listener);
    // node:http allows this long for a request head; after an answer, keepAliveTimeout applies.
    socket.setTimeout(this.#server.headersTimeout);
  }

  closeIdle(): void {
    if (this.#pending) this.#leave();
    else this.#socket.destroy();
  }

  #serve(): void {
    const socket = this.#socket;
    while (this.#pending && !this.#waitingForDrain && !this.#done) {
      const pending = this.#pending;
      const end = pending.indexOf(END_OF_HEAD);
      if (end === -1) {
        // Part of a head: wait for the rest, unless it is already longer than node would take or
        // ends its lines in bare LFs (then no CRLF CRLF may ever come, and node judges it now).
        if (pending.length > MAX_HEAD_BYTES || hasBareLineFeed(pending)) this.#leave();
        return;
      }
      const head = readRequestHead(pending.toString('latin1', 0, end));
      const answer = head && this.#tryAnswer(head);
      if (!answer) {
        this.#leave();
        return;
      }
      const rest = end + END_OF_HEAD.length;
      this.#pending = rest < pending.length ? pending.subarray(rest) : undefined;
      this.#write(answer);
      if (socket.writableNeedDrain) {
        // A client that sends faster than it reads: stop reading until it catches up.
        this.#waitingForDrain = true;
        socket.pause();
      }
    }
    if (!this.#pending) socket.setTimeout(this.#server.keepAliveTimeout);
  }

  /** A failure to answer here is node:http's to meet again, and the routes' to report. */
  #tryAnswer(head: RequestHead): SocketAnswer | undefined {
    try {
      return this.#answer(head);
    } catch {
      return undefined;
    }
  }

  /** Gives the connection to node:http with whatever has not been answered. */
  #leave(): void {
    const socket = this.#socket;
    let leftover = this.#pending;
    this.#finish();
    socket.pause();
    socket.setTimeout(0);
    // What arrived while reading was paused for a drain follows what was already here.
    for (let chunk = socket.read(); chunk !== null; chunk = socket.read()) {
      leftover = leftover ? Buffer.concat([leftover, chunk]) : chunk;
    }
    this.#handOver(leftover);
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#pending = undefined;
    for (const [event, listener] of this.#listeners) this.#socket.removeListener(event, listener);
    this.finished();
  }
}
