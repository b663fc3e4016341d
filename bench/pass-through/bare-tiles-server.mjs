// node:http's own limit for these tiles: one process, no framework, the same tile bytes nadir
// serves, read once from the pre-cut folder into a Map keyed by path. The query (nadir's apikey)
// is ignored, so both are asked for the very same URLs.
// With a third argument, a JSON file of header pairs (name, value, ...), every answer also carries
// those headers, as they are: nadir's header block at no cost of computing it, which tells what the
// size of the block costs node and the loopback apart from what nadir does to fill it.
// Usage: node bare-tiles-server.mjs <port> <pre-cut root> [<headers.json>]
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

const [portText, root, headersFile] = process.argv.slice(2);
const extra = headersFile ? JSON.parse(readFileSync(headersFile, 'utf8')) : [];
const tiles = new Map();
for (const z of readdirSync(root))
  for (const x of readdirSync(join(root, z)))
    for (const file of readdirSync(join(root, z, x)))
      tiles.set(`/tiles/v3/Vert/${z}/${x}/${file}`, readFileSync(join(root, z, x, file)));

// Built once per tile, so that an answer does nothing but write it.
const headBlocks = new Map(
  [...tiles.values()].map((body) => [body, [...extra, 'content-length', String(body.length)]]),
);

const server = createServer((request, response) => {
  const url = request.url ?? '';
  const query = url.indexOf('?');
  const body = tiles.get(query === -1 ? url : url.slice(0, query));
  if (!body) {
    response.writeHead(404, { 'content-length': 0 });
    response.end();
    return;
  }
  if (extra.length > 0) response.writeHead(200, headBlocks.get(body));
  else response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length });
  response.end(body);
});
server.keepAliveTimeout = 75_000;
server.listen(Number(portText), '127.0.0.1');
