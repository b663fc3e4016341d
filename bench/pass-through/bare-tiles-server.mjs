// node:http's own limit for these tiles: one process, no framework, the same tile bytes nadir
// serves, read once from the pre-cut folder into a Map keyed by path. The query (nadir's apikey)
// is ignored, so both are asked for the very same URLs.
// Usage: node bare-tiles-server.mjs <port> <pre-cut root>
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

const [portText, root] = process.argv.slice(2);
const tiles = new Map();
for (const z of readdirSync(root))
  for (const x of readdirSync(join(root, z)))
    for (const file of readdirSync(join(root, z, x)))
      tiles.set(`/tiles/v3/Vert/${z}/${x}/${file}`, readFileSync(join(root, z, x, file)));

const server = createServer((request, response) => {
  const url = request.url ?? '';
  const query = url.indexOf('?');
  const body = tiles.get(query === -1 ? url : url.slice(0, query));
  if (!body) {
    response.writeHead(404, { 'content-length': 0 });
    response.end();
    return;
  }
  response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length });
  response.end(body);
});
server.keepAliveTimeout = 75_000;
server.listen(Number(portText), '127.0.0.1');
