// The ceiling of one Node event loop on this machine: node:http, one process, no framework, no
// routing, the same JPEG-sized body for every URL. Usage: node bare-server.mjs <port> <body bytes>
import { createServer } from 'node:http';

const [port, bytes] = process.argv.slice(2).map(Number);
const body = Buffer.alloc(bytes, 0x5a);
const server = createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length });
  response.end(body);
});
server.keepAliveTimeout = 75_000;
server.listen(port, '127.0.0.1');
