/**
 * GETs to one HTTP(S) origin on kept-alive connections whose reads all land in one reused buffer
 * (net's `onread`), framed by response-parser.ts, the body handed on as it arrives.
 *
 * Why not node:http's client: it allocates a new 64 KiB buffer for every socket read and passes
 * each through a stream, an IncomingMessage and its events. Reading a survey file from s3rver
 * into blocks cost 3.23 CPU ms a MiB that way and 1.90 this way (bench/storage/block-reads.ts,
 * docs/deploy.md "Connections of its own").
 *
 * One request a connection at a time (no pipelining); at most `maxConnections` open, further
 * GETs wait their turn. A connection the server closed while it sat idle is found out when it is
 * reused: a GET that got not one byte back on a reused connection goes once more on a new one, as
 * node's agent users are told to do.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { type ConnectionOptions, connect as connectTls } from 'node:tls';
import { type ResponseHead, ResponseParser } from './response-parser.js';

/** Where an answer's body goes: chosen by its head, given the body, asked for the value at its end. */
export interface BodySink<T> {
  write(buffer: Buffer, from: number, to: number): void;
  /** The whole body came: the GET's value (a throw rejects the GET). */
  finish(): T;
}

export interface SocketGetPoolOptions {
  /** `http://host:port` or `https://host:port`. */
  origin: URL;
  maxConnections: number;
  /** An idle connection is closed after this long. */
  idleMs: number;
  /** Certificate authorities to trust for https instead of node's (tests' own). */
  ca?: Buffer;
}

/** Every connection reads into this buffer, handed to the parser and copied out at once. */
const READ_BUFFER_BYTES = 64 * 1024;

interface Exchange {
  parser: ResponseParser;
  /** Bytes of the answer seen yet: none means the request may go again on a new connection. */
  answered: boolean;
  fail(error: Error): void;
}

class Connection {
  readonly socket: Socket;
  exchange: Exchange | undefined;
  /** Carried an answer before (a failure with no answer may be a connection closed while idle). */
  reused = false;
  closed = false;

  constructor(options: SocketGetPoolOptions, readBuffer: Buffer, onClose: (connection: Connection) => void) {
    const { hostname, protocol } = options.origin;
    const port = Number(options.origin.port) || (protocol === 'https:' ? 443 : 80);
    const host = hostname.replace(/^\[|\]$/g, '');
    const onread = { buffer: readBuffer, callback: (bytes: number) => this.#received(readBuffer, bytes) };
    this.socket =
      protocol === 'https:'
        ? // tls.connect hands `onread` to the socket it makes (node's _tls_wrap.js); its types omit it.
          connectTls({
            host,
            port,
            servername: /^[\d.:]+$/.test(host) ? undefined : host,
            ca: options.ca,
            onread,
          } as ConnectionOptions)
        : connectTcp({ host, port, onread });
    this.socket.setNoDelay(true);
    this.#onClose = onClose;
    this.socket.on('error', (error) => this.destroy(error));
    this.socket.on('end', () => this.destroy());
    this.socket.on('close', () => this.destroy());
    // Idle too long (the pool sets the time only while the connection waits in it).
    this.socket.on('timeout', () => this.destroy());
  }

  readonly #onClose: (connection: Connection) => void;

  /**
   * Closes the connection at once, out of the pool before anyone can take it again. An answer
   * under way ends: a close-delimited body is complete with the end of the connection (not with
   * an error), anything else was cut short (a reset, as node:http calls it).
   */
  destroy(error?: Error): void {
    if (!this.closed) {
      this.closed = true;
      this.socket.destroy();
      this.#onClose(this);
    }
    const exchange = this.exchange;
    if (!exchange) return;
    this.exchange = undefined;
    if (error) {
      exchange.fail(error);
      return;
    }
    try {
      exchange.parser.end();
    } catch (cut) {
      exchange.fail(Object.assign(cut as Error, { code: 'ECONNRESET' }));
    }
  }

  #received(buffer: Buffer, bytes: number): boolean {
    const exchange = this.exchange;
    if (!exchange) {
      // Bytes nobody asked for: the connection can no longer be trusted to frame the next answer.
      this.destroy();
      return false;
    }
    exchange.answered = true;
    try {
      const used = exchange.parser.feed(buffer, 0, bytes);
      // More than the answer: not to be reused (the answer itself may already be in the pool's hands).
      if (used < bytes) this.destroy();
    } catch (error) {
      this.destroy(error as Error);
    }
    return true;
  }
}

export class SocketGetPool {
  readonly #options: SocketGetPoolOptions;
  readonly #readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  readonly #all = new Set<Connection>();
  readonly #idle: Connection[] = [];
  readonly #waiting: (() => void)[] = [];
  #closed = false;

  constructor(options: SocketGetPoolOptions) {
    this.#options = options;
  }

  /**
   * GET `path` with `headerLines` (each `name: value\r\n`); `receive` picks the body's sink from
   * the head. Rejects on a failed connection, a malformed or cut answer, or `timeoutMs` passing.
   */
  async get<T>(
    path: string,
    headerLines: string,
    receive: (head: ResponseHead) => BodySink<T>,
    timeoutMs: number,
  ): Promise<T> {
    const deadline = performance.now() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const connection = await this.#acquire(attempt > 0);
      try {
        return await this.#exchange(connection, path, headerLines, receive, deadline - performance.now());
      } catch (error) {
        const retry = (error as { retry?: boolean }).retry && attempt === 0;
        if (!retry) throw error;
      }
    }
  }

  /** Closes every connection: GETs under way fail, later ones are refused. */
  close(): void {
    this.#closed = true;
    for (const connection of [...this.#all]) connection.destroy(new Error('the storage connections are closed'));
    for (const wake of this.#waiting.splice(0)) wake();
  }

  async #acquire(fresh: boolean): Promise<Connection> {
    for (;;) {
      if (this.#closed) throw new Error('the storage connections are closed');
      const idle = fresh ? undefined : this.#idle.pop();
      if (idle) {
        idle.socket.setTimeout(0);
        return idle;
      }
      if (this.#all.size < this.#options.maxConnections) {
        const connection = new Connection(this.#options, this.#readBuffer, (closed) => this.#forget(closed));
        this.#all.add(connection);
        return connection;
      }
      // A retry needs a new connection: room is made by closing an idle one.
      if (fresh && this.#idle.length > 0) {
        this.#idle[0]?.destroy();
        continue;
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
  }

  #forget(connection: Connection): void {
    this.#all.delete(connection);
    const at = this.#idle.indexOf(connection);
    if (at !== -1) this.#idle.splice(at, 1);
    this.#waiting.shift()?.();
  }

  #release(connection: Connection, keepAlive: boolean): void {
    connection.exchange = undefined;
    if (!keepAlive || connection.closed || this.#closed) {
      connection.destroy();
      return;
    }
    connection.reused = true;
    connection.socket.setTimeout(this.#options.idleMs);
    this.#idle.push(connection);
    this.#waiting.shift()?.();
  }

  #exchange<T>(
    connection: Connection,
    path: string,
    headerLines: string,
    receive: (head: ResponseHead) => BodySink<T>,
    timeoutMs: number,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let sink: BodySink<T> | undefined;
      let keepAlive = false;
      let settled = false;
      /** `framed`: the answer came whole (an error of the sink's own leaves the connection usable). */
      const settle = (error: Error | undefined, value?: T, framed = !error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (framed) this.#release(connection, keepAlive);
        else {
          connection.exchange = undefined;
          connection.destroy();
        }
        if (error) reject(error);
        else resolve(value as T);
      };
      const timer = setTimeout(
        () => {
          // Named as AbortSignal.timeout names its error: the storage watch counts it as no answer.
          const error = new Error(`object storage did not answer within ${Math.round(timeoutMs)} ms`);
          settle(Object.assign(error, { name: 'TimeoutError' }));
        },
        Math.max(0, timeoutMs),
      );
      const parser = new ResponseParser({
        head: (head) => {
          keepAlive = head.keepAlive;
          sink = receive(head);
        },
        body: (buffer, from, to) => sink?.write(buffer, from, to),
        done: () => {
          let value: T;
          try {
            value = (sink as BodySink<T>).finish();
          } catch (error) {
            settle(error as Error, undefined, true);
            return;
          }
          settle(undefined, value);
        },
      });
      const exchange: Exchange = {
        parser,
        answered: false,
        fail: (error) => {
          // Not one byte back on a connection that had carried answers: it was closed while idle.
          if (!exchange.answered && connection.reused) Object.assign(error, { retry: true });
          settle(error);
        },
      };
      if (connection.closed) {
        exchange.fail(new Error('the storage connection closed'));
        return;
      }
      connection.exchange = exchange;
      connection.socket.write(`GET ${path} HTTP/1.1\r\n${headerLines}\r\n`);
    });
  }
}
