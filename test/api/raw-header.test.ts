import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { rawHeader } from '../../src/api/http/raw-header.js';

/** Sends `head` as raw bytes (so repeats and odd cases reach the server as written); resolves with the request node:http parsed. */
async function parsed(head: string): Promise<IncomingMessage> {
  let seen: IncomingMessage | undefined;
  const server = createServer((request, response) => {
    seen = request;
    response.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const socket = connect(port, '127.0.0.1');
  socket.write(`${head}\r\n`);
  socket.resume();
  await once(socket, 'data');
  socket.destroy();
  server.close();
  return seen as IncomingMessage;
}

test('rawHeader gives what request.headers gives: case folded, repeats joined, Authorization first kept', async () => {
  const request = await parsed(
    [
      'GET /tiles/v3/Vert/1/0/0.jpg HTTP/1.1',
      'Host: example',
      'If-None-Match: "a"',
      'if-none-match: W/"b", "c"',
      'X-REQUEST-ID: one',
      'x-request-id: two',
      'Authorization: Apikey first',
      'authorization: Apikey second',
      'X-Request-Idx: not this one',
      '',
    ].join('\r\n'),
  );
  for (const name of ['if-none-match', 'x-request-id']) {
    assert.equal(rawHeader(request, name), request.headers[name], name);
  }
  assert.equal(rawHeader(request, 'if-none-match'), '"a", W/"b", "c"');
  assert.equal(rawHeader(request, 'authorization', true), request.headers.authorization);
  assert.equal(rawHeader(request, 'authorization', true), 'Apikey first');
  assert.equal(rawHeader(request, 'x-absent'), undefined);
});

test('rawHeader of a single header is its value, untouched', async () => {
  const request = await parsed('GET / HTTP/1.1\r\nHost: example\r\nX-Request-Id: abc-123\r\n');
  assert.equal(rawHeader(request, 'x-request-id'), 'abc-123');
  assert.equal(rawHeader(request, 'host'), 'example');
});
