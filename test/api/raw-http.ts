/**
 * A raw HTTP/1.1 client for tests that need what fetch hides: several requests on one connection
 * (pipelined, or split into pieces), the exact headers, and whether the server closed.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  /** Lowercased names; repeats joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawExchange {
  responses: RawResponse[];
  /** The server closed the connection. */
  closed: boolean;
  socket: Socket;
}

/** Parses whole responses off the front of `data`; `heads[i]` says the i-th answers a HEAD. */
function parseResponses(data: Buffer, heads: boolean[], into: RawResponse[]): Buffer {
  let rest = data;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) return rest;
    const lines = rest.toString('latin1', 0, end).split('\r\n');
    const status = Number((lines[0] as string).split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const noBody = heads[into.length] === true || status === 304 || status === 204;
    const length = noBody ? 0 : Number(headers['content-length'] ?? 0);
    if (rest.length < end + 4 + length) return rest;
    into.push({ status, headers, body: rest.subarray(end + 4, end + 4 + length) });
    rest = rest.subarray(end + 4 + length);
  }
}

/**
 * Sends `pieces` on one connection (waiting `gapMs` between them) and reads until `heads.length`
 * responses have come, the server closes, or `timeoutMs` passes. Leaves the socket open.
 */
export async function exchange(
  port: number,
  pieces: (string | Buffer)[],
  heads: boolean[],
  options: { gapMs?: number; timeoutMs?: number; socket?: Socket } = {},
): Promise<RawExchange> {
  const socket = options.socket ?? connect(port, '127.0.0.1');
  const responses: RawResponse[] = [];
  let pending: Buffer = Buffer.alloc(0);
  let closed = false;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(finish, options.timeoutMs ?? 10_000);
    function finish() {
      clearTimeout(timer);
      socket.removeListener('data', onData);
      socket.removeListener('close', onClose);
      resolve();
    }
    function onData(chunk: Buffer) {
      pending = parseResponses(Buffer.concat([pending, chunk]), heads, responses);
      if (responses.length >= heads.length) finish();
    }
    function onClose() {
      closed = true;
      finish();
    }
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.on('error', () => undefined);
  });
  for (const piece of pieces) {
    socket.write(piece);
    if (options.gapMs) await new Promise((resolve) => setTimeout(resolve, options.gapMs));
  }
  await done;
  return { responses, closed, socket };
}

/** A GET (or another method) request head, with extra header lines. */
export function request(path: string, extra: string[] = [], method = 'GET'): string {
  return [`${method} ${path} HTTP/1.1`, 'Host: test', ...extra, '', ''].join('\r\n');
}
