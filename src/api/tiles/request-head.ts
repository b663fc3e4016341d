/**
 * Reads an HTTP/1.1 request head for the socket lane (socket-lane.ts), and only the plainest kind:
 * a GET of an origin-form target with a Host header and no body, keep-alive. Anything else, odd or
 * merely unusual (HEAD, a body, `Connection: close`, obsolete line folding, bytes outside ASCII,
 * credentials in a header), gives undefined: node:http then reads the same bytes and judges them
 * by its own rules, so this reader never has to be as complete as node's, only stricter.
 */

/** What the lane needs of a request it may answer. */
export interface RequestHead {
  /** The request target as sent, e.g. `/tiles/v3/Vert/1/0/0.jpg?apikey=...`. */
  target: string;
  /** Repeats joined with ", ", as node:http joins them. */
  ifNoneMatch: string | undefined;
  xRequestId: string | undefined;
}

/** node:http's default limit on a request head (`--max-http-header-size`, 16 KiB). */
export const MAX_HEAD_BYTES = 16 * 1024;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII: no spaces, controls or bytes above 0x7e in a target. */
const TARGET = /^\/[\x21-\x7e]*$/;
/** Field values: visible ASCII, spaces and tabs. */
const VALUE = /^[\t\x20-\x7e]*$/;
/** Headers whose presence asks for more than a plain GET: node:http deals with them. */
const NODE_ONLY: ReadonlySet<string> = new Set([
  'authorization',
  'content-length',
  'transfer-encoding',
  'expect',
  'upgrade',
  'te',
  'trailer',
]);

function joined(previous: string | undefined, value: string): string {
  return previous === undefined ? value : `${previous}, ${value}`;
}

/** The head in `text` (without its closing blank line), or undefined for node:http to read. */
export function readRequestHead(text: string): RequestHead | undefined {
  if (text.length > MAX_HEAD_BYTES) return undefined;
  const lines = text.split('\r\n');
  const requestLine = (lines[0] as string).split(' ');
  if (requestLine.length !== 3 || requestLine[0] !== 'GET' || requestLine[2] !== 'HTTP/1.1') return undefined;
  const target = requestLine[1] as string;
  if (!TARGET.test(target)) return undefined;
  let hosts = 0;
  let ifNoneMatch: string | undefined;
  let xRequestId: string | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) return undefined;
    const raw = line.slice(colon + 1);
    if (!VALUE.test(raw)) return undefined;
    const value = raw.trim();
    const lower = name.toLowerCase();
    if (NODE_ONLY.has(lower)) return undefined;
    if (lower === 'host') hosts++;
    else if (lower === 'if-none-match') ifNoneMatch = joined(ifNoneMatch, value);
    else if (lower === 'x-request-id') xRequestId = joined(xRequestId, value);
    else if (lower === 'connection' && value.toLowerCase() !== 'keep-alive') return undefined;
  }
  if (hosts !== 1) return undefined;
  return { target, ifNoneMatch, xRequestId };
}
