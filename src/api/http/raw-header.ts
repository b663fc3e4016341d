import type { IncomingMessage } from 'node:http';

/**
 * One request header read from `rawHeaders`, as `request.headers` would give it. node:http builds
 * `request.headers` on first use, an object holding every header a browser sends; the tile lane
 * needs two or three of them per request, and on its busiest path that object cost more than
 * everything else it does (docs/tiles.md). Repeats are joined with ", " as node:http joins them,
 * except for the headers it keeps the first of (Authorization among them): pass `first`.
 */
export function rawHeader(request: IncomingMessage, lowerName: string, first = false): string | undefined {
  const raw = request.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length !== lowerName.length || name.toLowerCase() !== lowerName) continue;
    const found = raw[i + 1] as string;
    if (value === undefined) value = found;
    else if (first) break;
    else value = `${value}, ${found}`;
  }
  return value;
}
