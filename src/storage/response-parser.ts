/**
 * An HTTP/1.1 response to a GET, framed from bytes fed in as they arrive (RFC 9112: status line,
 * header fields, then a body delimited by Content-Length, chunked transfer coding or the end of
 * the connection). Pure: no sockets, no buffers kept; the body goes to the handler as ranges of
 * the very buffer fed in, which the caller may reuse once `feed` returns (socket-get-pool.ts reads
 * every socket into one buffer). test/storage/response-parser.test.ts frames a corpus of answers
 * as node:http's client frames them.
 */

export interface ResponseHead {
  status: number;
  /** Field names lower-cased; repeated fields joined with ", " (as node does for most). */
  headers: Map<string, string>;
  /** The connection may carry another request after this answer. */
  keepAlive: boolean;
}

export interface ResponseHandler {
  head(head: ResponseHead): void;
  /** Body bytes `buffer[from, to)`: valid only during the call. */
  body(buffer: Buffer, from: number, to: number): void;
  done(): void;
}

/** node's default --max-http-header-size: a longer head is an error, as there. */
export const MAX_HEAD_BYTES = 16 * 1024;

const END_OF_HEAD = '\r\n\r\n';
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const DIGITS = /^\d+$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]+)(?:;[^\r\n]*)?$/;

type State = 'head' | 'length' | 'close' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers' | 'done';

export class ResponseParser {
  readonly #handler: ResponseHandler;
  #state: State = 'head';
  /** Head, chunk-size line or trailer text gathered so far. */
  #text = '';
  /** Body or chunk bytes still to come. */
  #left = 0;

  constructor(handler: ResponseHandler) {
    this.#handler = handler;
  }

  get done(): boolean {
    return this.#state === 'done';
  }

  /**
   * Frames `buffer[from, to)`. Returns where the answer ended when it ended inside these bytes
   * (what follows is not part of it), else `to`. Throws on bytes that are not an HTTP answer.
   */
  feed(buffer: Buffer, from: number, to: number): number {
    let at = from;
    while (at < to && this.#state !== 'done') {
      switch (this.#state) {
        case 'head':
          at = this.#headBytes(buffer, at, to);
          break;
        case 'length':
        case 'chunk-data': {
          const end = Math.min(to, at + this.#left);
          this.#handler.body(buffer, at, end);
          this.#left -= end - at;
          at = end;
          if (this.#left === 0) {
            if (this.#state === 'length') this.#finish();
            else this.#state = 'chunk-end';
          }
          break;
        }
        case 'close':
          this.#handler.body(buffer, at, to);
          at = to;
          break;
        default:
          at = this.#chunkLine(buffer, at, to);
      }
    }
    return at;
  }

  /** The connection ended: the end of a close-delimited body, or an answer cut short. */
  end(): void {
    if (this.#state === 'close') this.#finish();
    else if (this.#state !== 'done')
      throw new Error(`the connection closed in the middle of an answer (${this.#state})`);
  }

  #finish(): void {
    this.#state = 'done';
    this.#handler.done();
  }

  #headBytes(buffer: Buffer, from: number, to: number): number {
    // Where the head ends: in these bytes, or across the last read's and these. Body bytes after
    // it are never turned into text. `indexOf` looks past `to` too (a reused buffer holds older
    // bytes there), so a match must lie wholly below `to`.
    const carried = Math.min(3, this.#text.length);
    let end = -1;
    if (carried > 0) {
      const joined = this.#text.slice(-carried) + buffer.toString('latin1', from, Math.min(to, from + 3));
      const at = joined.indexOf(END_OF_HEAD);
      if (at !== -1) end = from + at + END_OF_HEAD.length - carried;
    }
    if (end === -1) {
      const at = buffer.indexOf(END_OF_HEAD, from, 'latin1');
      if (at !== -1 && at + END_OF_HEAD.length <= to) end = at + END_OF_HEAD.length;
    }
    this.#text += buffer.toString('latin1', from, end === -1 ? to : end);
    if (this.#text.length - (end === -1 ? 0 : END_OF_HEAD.length) > MAX_HEAD_BYTES)
      throw new Error('the answer’s head is too long');
    if (end === -1) return to;
    const head = this.#text.slice(0, -END_OF_HEAD.length);
    this.#text = '';
    this.#startBody(head);
    return end;
  }

  #startBody(text: string): void {
    // Lines end in CRLF only: node refuses a bare LF (or CR) in a head.
    if (/[\r\n]/.test(text.replaceAll('\r\n', ''))) throw new Error('a line of the head does not end in CRLF');
    const lines = text.split('\r\n');
    const status = STATUS_LINE.exec(lines[0] ?? '');
    if (!status) throw new Error(`not an HTTP/1.x status line: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`);
    const code = Number(status[2]);
    const headers = new Map<string, string>();
    const lengths: string[] = [];
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      if (colon <= 0 || !FIELD_NAME.test(name))
        throw new Error(`not a header field: ${JSON.stringify(line.slice(0, 80))}`);
      const value = line.slice(colon + 1).trim();
      if (name === 'content-length') lengths.push(value);
      const had = headers.get(name);
      headers.set(name, had === undefined ? value : `${had}, ${value}`);
    }
    // 1xx answers (100 Continue, 103 Early Hints) come before the real one.
    if (code >= 100 && code < 200) {
      if (code === 101) throw new Error('the server switched protocols');
      return;
    }
    const connection = (headers.get('connection') ?? '').toLowerCase().split(/\s*,\s*/);
    let keepAlive = status[1] === '1' ? !connection.includes('close') : connection.includes('keep-alive');
    const coding = headers.get('transfer-encoding');
    if (code === 204 || code === 304) this.#state = 'done';
    else if (coding !== undefined) {
      if (lengths.length > 0) throw new Error('an answer with both Transfer-Encoding and Content-Length');
      const last = coding
        .toLowerCase()
        .split(/\s*,\s*/)
        .at(-1);
      this.#state = last === 'chunked' ? 'chunk-size' : 'close';
    } else if (lengths.length > 0) {
      // Even two equal lengths are refused, as node refuses them.
      const [length] = lengths;
      if (lengths.length > 1 || length === undefined || !DIGITS.test(length)) throw new Error('a bad Content-Length');
      this.#left = Number(length);
      if (!Number.isSafeInteger(this.#left)) throw new Error('a bad Content-Length');
      this.#state = this.#left === 0 ? 'done' : 'length';
    } else this.#state = 'close';
    if (this.#state === 'close') keepAlive = false;
    this.#handler.head({ status: code, headers, keepAlive });
    if (this.#state === 'done') this.#handler.done();
  }

  /** A chunk-size line, the CRLF after a chunk's data, or a trailer line: one line of text. */
  #chunkLine(buffer: Buffer, from: number, to: number): number {
    const newline = buffer.indexOf(10, from);
    const end = newline === -1 || newline >= to ? to : newline + 1;
    this.#text += buffer.toString('latin1', from, end);
    if (this.#text.length > MAX_HEAD_BYTES) throw new Error('a chunk line is too long');
    if (!this.#text.endsWith('\n')) return end;
    if (!this.#text.endsWith('\r\n')) throw new Error('a chunk line does not end in CRLF');
    const line = this.#text.slice(0, -2);
    this.#text = '';
    if (this.#state === 'chunk-end') {
      if (line !== '') throw new Error('chunk data longer than its size');
      this.#state = 'chunk-size';
    } else if (this.#state === 'trailers') {
      if (line === '') this.#finish();
    } else {
      const size = CHUNK_SIZE.exec(line);
      if (!size?.[1] || size[1].length > 12) throw new Error(`a bad chunk size: ${JSON.stringify(line.slice(0, 40))}`);
      this.#left = Number.parseInt(size[1], 16);
      this.#state = this.#left === 0 ? 'trailers' : 'chunk-data';
    }
    return end;
  }
}
