// The floor for a pass-through answer under nadir's contract: bare node:http doing, as plainly as
// node allows, the work every tile answer owes whoever serves it (the spec and decisions.md), and
// nothing else. The key from the query checked by its SHA-256 digest (as nadir's key cache is
// keyed, api-key.ts), a fixed-window rate limit counted in memory, the tile counted for the
// account's monthly usage, a new request id, If-None-Match against the tile's ETag, and the same
// header block as nadir's, timings measured. No router, no validation of the query, no catalogue:
// the tiles come from a Map, with the ETags and survey ids nadir gave them.
// Usage: node bare-owed-server.mjs <port> <pre-cut root> <owed.json: {apiKey, etags, cors, surveyIds, cacheControl, limit, interval}>
import { hash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const [portText, root, owedFile] = process.argv.slice(2);
const owed = JSON.parse(readFileSync(owedFile, 'utf8'));
const tiles = new Map();
for (const z of readdirSync(root))
  for (const x of readdirSync(join(root, z)))
    for (const file of readdirSync(join(root, z, x))) {
      const body = readFileSync(join(root, z, x, file));
      const etag = owed.etags[`${z}/${x}/${file.replace(/\.jpg$/, '')}`];
      tiles.set(`/tiles/v3/Vert/${z}/${x}/${file}`, { body, etag, length: String(body.length) });
    }
const digest = (key) => hash('sha256', key, 'base64url');
const accounts = new Map([[digest(owed.apiKey), { id: 'account', keyId: 'key' }]]);
const windows = new Map();
const usage = new Map();
const limitText = String(owed.limit);

function header(request, lowerName) {
  const raw = request.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === lowerName) return raw[i + 1];
  return undefined;
}

const server = createServer((request, response) => {
  const started = performance.now();
  const url = request.url ?? '';
  const query = url.indexOf('?');
  const tile = tiles.get(query === -1 ? url : url.slice(0, query));
  const at = query === -1 ? -1 : url.indexOf('apikey=', query);
  const end = at === -1 ? -1 : url.indexOf('&', at);
  const account = at === -1 ? undefined : accounts.get(digest(url.slice(at + 7, end === -1 ? undefined : end)));
  if (!tile || !account) {
    response.writeHead(tile ? 401 : 404, { 'content-length': 0 });
    response.end();
    return;
  }
  const now = new Date();
  const seconds = now.getTime() / 1000;
  const start = Math.floor(seconds / owed.interval) * owed.interval;
  let window = windows.get(account.keyId);
  if (!window || window.start !== start) {
    window = { start, end: start + owed.interval, count: 0 };
    windows.set(account.keyId, window);
  }
  if (window.count >= owed.limit) {
    response.writeHead(429, { 'content-length': 0 });
    response.end();
    return;
  }
  window.count++;
  const headers = [
    'x-request-id',
    randomUUID(),
    ...owed.cors,
    'x-ratelimit-limit',
    limitText,
    'x-ratelimit-remaining',
    String(owed.limit - window.count),
    'x-ratelimit-reset',
    String(window.end),
    'etag',
    tile.etag,
    'cache-control',
    owed.cacheControl,
  ];
  const catalogue = performance.now() - started;
  if (header(request, 'if-none-match') === tile.etag) {
    headers.push(
      'server-timing',
      `catalogue;dur=${catalogue.toFixed(2)}, total;dur=${(performance.now() - started).toFixed(2)}`,
    );
    response.writeHead(304, headers);
    response.end();
    return;
  }
  const month = `${now.getUTCFullYear()}-${now.getUTCMonth() + 1}`;
  let counts = usage.get(month);
  if (!counts) {
    counts = new Map();
    usage.set(month, counts);
  }
  counts.set(account.id, (counts.get(account.id) ?? 0) + 1);
  headers.push(
    'content-type',
    'image/jpeg',
    'x-survey-ids',
    owed.surveyIds,
    'server-timing',
    `catalogue;dur=${catalogue.toFixed(2)}, render;dur=0, passthrough;dur=0, lane;dur=0, total;dur=${(performance.now() - started).toFixed(2)}`,
    'content-length',
    tile.length,
  );
  response.writeHead(200, headers);
  response.end(tile.body);
});
server.keepAliveTimeout = 75_000;
server.listen(Number(portText), '127.0.0.1');
