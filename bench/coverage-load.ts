import { connect, type Socket } from 'node:net';

/**
 * A small closed-loop load generator: `connections` keep-alive HTTP/1.1 connections, each
 * sending its next request as soon as the previous answer has been read in full. Bounded by
 * time; a warm-up period is run and thrown away first.
 *
 * It speaks HTTP over raw sockets instead of node:http's client because, on a 2-core machine,
 * the client shares the CPU with the server: node:http's client costs about as much per
 * request as the server does, and the benchmark would measure the client. It only handles
 * what nadir sends (Content-Length bodies, no chunking) and fails loudly on anything else.
 */

export interface LoadOptions {
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** The i-th request's path (round robin over a prepared list, typically). */
  path: (i: number) => string;
  baseUrl: string;
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** Status codes other than 200, by code. */
  statuses: Record<string, number>;
  seconds: number;
  latenciesMs: number[];
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;

/** One keep-alive connection that runs one request at a time. */
class Connection {
  readonly #socket: Socket;
  readonly #host: string;
  #buffer: Buffer = Buffer.alloc(0);
  #waiting: { resolve: (status: number) => void; reject: (error: Error) => void } | undefined;

  constructor(url: URL) {
    this.#host = url.host;
    this.#socket = connect(Number(url.port), url.hostname);
    this.#socket.setNoDelay(true);
    this.#socket.on('data', (chunk) => this.#receive(chunk));
    this.#socket.on('error', (error) => this.#fail(error));
    this.#socket.on('close', () => this.#fail(new Error('connection closed')));
  }

  request(path: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      this.#socket.write(`GET ${path} HTTP/1.1\r\nHost: ${this.#host}\r\n\r\n`);
    });
  }

  close(): void {
    this.#socket.destroy();
  }

  #receive(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const headerEnd = this.#buffer.indexOf(HEADER_END);
    if (headerEnd === -1) return;
    const head = this.#buffer.subarray(0, headerEnd).toString('latin1');
    const length = CONTENT_LENGTH.exec(head);
    if (!length?.[1]) {
      this.#fail(new Error(`response without Content-Length: ${head.slice(0, 200)}`));
      return;
    }
    const end = headerEnd + HEADER_END.length + Number(length[1]);
    if (this.#buffer.length < end) return;
    this.#buffer = this.#buffer.subarray(end);
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.resolve(Number(head.slice(9, 12)));
  }

  #fail(error: Error): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.reject(error);
  }
}

async function phase(connections: Connection[], options: LoadOptions, seconds: number, counter: { next: number }) {
  const result: LoadResult = { requests: 0, errors: 0, statuses: {}, seconds, latenciesMs: [] };
  const deadline = performance.now() + seconds * 1000;
  const worker = async (connection: Connection) => {
    while (performance.now() < deadline) {
      const started = performance.now();
      try {
        const status = await connection.request(options.path(counter.next++));
        result.latenciesMs.push(performance.now() - started);
        result.requests++;
        if (status !== 200) result.statuses[status] = (result.statuses[status] ?? 0) + 1;
      } catch {
        // A broken connection cannot carry on; count it and stop this worker.
        result.errors++;
        return;
      }
    }
  };
  const started = performance.now();
  await Promise.all(connections.map(worker));
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.baseUrl);
  const connections = Array.from({ length: options.connections }, () => new Connection(url));
  try {
    const counter = { next: 0 };
    await phase(connections, options, options.warmupSeconds, counter);
    return await phase(connections, options, options.seconds, counter);
  } finally {
    for (const connection of connections) connection.close();
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}
