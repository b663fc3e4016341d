/**
 * Replays raw bytes on one TCP connection and reads back what a server did with them: the answers
 * in order (the response stream parsed as a client would, 1xx interim answers, content-length,
 * chunked and close-delimited bodies, bodiless answers to HEAD), and whether and how the server
 * closed. test/api/http-conformance.test.ts compares these outcomes between nadir and plain
 * node:http.
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Answer {
  status: number;
  /** Lowercased names; repeats joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

export interface Outcome {
  answers: Answer[];
  /** The server closed the connection (a FIN or a reset) before the replay stopped waiting. */
  closed: boolean;
  /** Bytes after the last whole answer that do not make one (a torn or garbled answer). */
  leftover: Buffer;
  /** Milliseconds from the first byte written to the close, when closed. */
  closedAfterMs?: number;
}

/** Statuses of the answers, interim ones included, e.g. `100 200 400`. */
export function statusesOf(outcome: Outcome): number[] {
  return outcome.answers.map((answer) => answer.status);
}

interface Parsed {
  answer: Answer;
  length: number;
}

function headBlock(data: Buffer): { lines: string[]; end: number } | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  return { lines: data.toString('latin1', 0, end).split('\r\n'), end: end + 4 };
}

/** A chunked body starting at `start`: its decoded bytes and where it ends, or undefined if incomplete. */
function chunked(data: Buffer, start: number): { body: Buffer; end: number } | undefined {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = Number.parseInt(data.toString('latin1', at, lineEnd).split(';')[0] as string, 16);
    if (!Number.isFinite(size)) throw new Error(`bad chunk size at ${at}`);
    at = lineEnd + 2;
    if (size === 0) {
      // Trailers, then an empty line.
      for (;;) {
        const trailerEnd = data.indexOf('\r\n', at);
        if (trailerEnd === -1) return undefined;
        const empty = trailerEnd === at;
        at = trailerEnd + 2;
        if (empty) return { body: Buffer.concat(parts), end: at };
      }
    }
    if (data.length < at + size + 2) return undefined;
    parts.push(data.subarray(at, at + size));
    at += size + 2;
  }
}

/**
 * One answer off the front of `data`, or undefined while it is incomplete. `head` says the answer is
 * to a HEAD request; `closed`, that no more bytes will come (a close-delimited body is whole).
 */
export function parseAnswer(data: Buffer, head: boolean, closed: boolean): Parsed | undefined {
  const block = headBlock(data);
  if (!block) return undefined;
  const [statusLine = '', ...lines] = block.lines;
  const match = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine);
  if (!match) throw new Error(`not a status line: ${JSON.stringify(statusLine.slice(0, 80))}`);
  const status = Number(match[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`not a header line: ${JSON.stringify(line.slice(0, 80))}`);
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const bodiless = head || (status >= 100 && status < 200) || status === 204 || status === 304;
  if (bodiless) return { answer: { status, headers, body: Buffer.alloc(0) }, length: block.end };
  if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) {
    const body = chunked(data, block.end);
    return body ? { answer: { status, headers, body: body.body }, length: body.end } : undefined;
  }
  const declared = headers['content-length'];
  if (declared !== undefined) {
    const length = Number(declared);
    if (data.length < block.end + length) return undefined;
    return {
      answer: { status, headers, body: data.subarray(block.end, block.end + length) },
      length: block.end + length,
    };
  }
  // No length: the body runs to the close.
  if (!closed) return undefined;
  return { answer: { status, headers, body: data.subarray(block.end) }, length: data.length };
}

/** Every whole answer in `data`; `methods[i]` is the method of the i-th request (for HEAD). */
export function parseAnswers(
  data: Buffer,
  methods: readonly string[],
  closed: boolean,
): { answers: Answer[]; rest: Buffer } {
  const answers: Answer[] = [];
  let rest = data;
  let finals = 0;
  for (;;) {
    if (rest.length === 0) break;
    let parsed: Parsed | undefined;
    try {
      parsed = parseAnswer(rest, methods[finals] === 'HEAD', closed);
    } catch {
      break;
    }
    if (!parsed) break;
    answers.push(parsed.answer);
    if (parsed.answer.status >= 200) finals++;
    rest = rest.subarray(parsed.length);
  }
  return { answers, rest };
}

export interface ReplayOptions {
  /** Pause between pieces, ms (default: none; the pieces still go in separate writes). */
  gapMs?: number;
  /** Write every piece one byte at a time. */
  bytewise?: boolean;
  /** Methods of the requests in order, to read answers to HEAD without a body. */
  methods?: readonly string[];
  /** Stop once the server has been silent this long after the last write (default 150 ms)... */
  quietMs?: number;
  /** ...but not before this many final answers have come (default 0)... */
  minAnswers?: number;
  /** ...and, when true, wait for the server to close rather than for silence. */
  awaitClose?: boolean;
  /** Give up waiting after this long, ms (default 5,000). */
  timeoutMs?: number;
  /** Half-close (send FIN) after the last piece. */
  endAfter?: boolean;
}

/**
 * Writes `pieces` on a fresh connection and reads until the server closes or falls silent; the
 * connection is then destroyed. On a `given` socket (a keep-alive connection) it is left open.
 */
export async function replay(
  port: number,
  pieces: readonly (string | Buffer)[],
  options: ReplayOptions = {},
  given?: Socket,
): Promise<Outcome> {
  const socket = given ?? connect(port, '127.0.0.1');
  const methods = options.methods ?? [];
  const quietMs = options.quietMs ?? 150;
  const chunks: Buffer[] = [];
  let closed = socket.destroyed;
  let closedAt = 0;
  let lastData = Date.now();
  /** Turns of the event loop since the last data: silence counts only if the server had turns too. */
  let turnsSinceData = 0;
  let writing = true;
  const started = Date.now();
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    lastData = Date.now();
    turnsSinceData = 0;
  };
  const onClose = () => {
    closed = true;
    closedAt = Date.now();
  };
  socket.on('data', onData);
  socket.on('close', onClose);
  socket.on('error', () => undefined);
  socket.setNoDelay(true);
  if (socket.connecting) await new Promise((resolve) => socket.once('connect', resolve));

  const finals = () => parseAnswers(Buffer.concat(chunks), methods, false).answers.filter((a) => a.status >= 200);
  const settled = (): boolean => {
    if (closed) return true;
    if (writing) return false;
    if (finals().length < (options.minAnswers ?? 0)) return false;
    if (options.awaitClose) return false;
    // A stalled event loop (a loaded machine) makes wall-clock silence mean nothing: the server,
    // in this process, must also have had its turns to answer.
    return Date.now() - lastData >= quietMs && turnsSinceData >= 10;
  };

  const writer = (async () => {
    for (const [index, piece] of pieces.entries()) {
      if (index > 0 && options.gapMs) await sleep(options.gapMs);
      if (closed) break;
      const bytes = Buffer.from(piece as string, 'latin1');
      if (options.bytewise) {
        for (let i = 0; i < bytes.length && !closed; i++) {
          socket.write(bytes.subarray(i, i + 1));
          // A macrotask between bytes, so each is its own segment on the wire.
          await new Promise((resolve) => setImmediate(resolve));
        }
      } else if (!closed) {
        socket.write(bytes);
      }
    }
    if (options.endAfter && !closed) socket.end();
    lastData = Math.max(lastData, Date.now());
    turnsSinceData = 0;
    writing = false;
  })();

  const deadline = started + (options.timeoutMs ?? 5_000);
  while (!settled() && Date.now() < deadline) {
    await sleep(10);
    turnsSinceData++;
  }
  await writer;
  socket.removeListener('data', onData);
  socket.removeListener('close', onClose);
  if (!given) socket.destroy();
  const { answers, rest } = parseAnswers(Buffer.concat(chunks), methods, closed);
  return { answers, closed, leftover: rest, ...(closed ? { closedAfterMs: closedAt - started } : {}) };
}
