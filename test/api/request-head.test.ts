import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readRequestHead } from '../../src/api/tiles/request-head.js';

const head = (...lines: string[]) => lines.join('\r\n');

test('a plain GET gives its target and the headers the tile answer depends on', () => {
  assert.deepEqual(readRequestHead(head('GET /tiles/v3/Vert/1/0/0.jpg?apikey=k HTTP/1.1', 'Host: x')), {
    target: '/tiles/v3/Vert/1/0/0.jpg?apikey=k',
    ifNoneMatch: undefined,
    xRequestId: undefined,
  });
  const read = readRequestHead(
    head(
      'GET /t HTTP/1.1',
      'host: x',
      'IF-NONE-MATCH:   "a"  ',
      'If-None-Match: W/"b"',
      'X-Request-Id: trace-1',
      'Connection: Keep-Alive',
      'User-Agent: Mozilla/5.0 (X11; Linux x86_64)',
      'Accept:',
    ),
  );
  assert.deepEqual(read, { target: '/t', ifNoneMatch: '"a", W/"b"', xRequestId: 'trace-1' });
});

test('anything but the plainest GET is left to node:http', () => {
  const declined = [
    head('HEAD /t HTTP/1.1', 'Host: x'),
    head('get /t HTTP/1.1', 'Host: x'),
    head('GET /t HTTP/1.0', 'Host: x'),
    head('GET /t HTTP/2.0', 'Host: x'),
    head('GET  /t HTTP/1.1', 'Host: x'),
    head('GET http://x/t HTTP/1.1', 'Host: x'),
    head('GET * HTTP/1.1', 'Host: x'),
    head('GET /t\u00e9 HTTP/1.1', 'Host: x'),
    head('GET /t\x7f HTTP/1.1', 'Host: x'),
    head('GET /t HTTP/1.1'),
    head('GET /t HTTP/1.1', 'Host: x', 'Host: y'),
    head('GET /t HTTP/1.1', 'Host: x', ' folded'),
    head('GET /t HTTP/1.1', 'Host: x', '\tfolded'),
    head('GET /t HTTP/1.1', 'Host: x', 'No colon'),
    head('GET /t HTTP/1.1', 'Host: x', ': no name'),
    head('GET /t HTTP/1.1', 'Host: x', 'Bad Name: 1'),
    head('GET /t HTTP/1.1', 'Host: x', 'Bad(name): 1'),
    head('GET /t HTTP/1.1', 'Host: x', 'X: a\nb'),
    head('GET /t HTTP/1.1', 'Host: x', 'X: caf\u00e9'),
    head('GET /t HTTP/1.1', 'Host: x', 'X: \x00'),
    head('GET /t HTTP/1.1', 'Host: x', ''),
    head('GET /t HTTP/1.1', 'Host: x', 'Authorization: Apikey k'),
    head('GET /t HTTP/1.1', 'Host: x', 'Content-Length: 0'),
    head('GET /t HTTP/1.1', 'Host: x', 'Transfer-Encoding: chunked'),
    head('GET /t HTTP/1.1', 'Host: x', 'Expect: 100-continue'),
    head('GET /t HTTP/1.1', 'Host: x', 'Upgrade: websocket', 'Connection: Upgrade'),
    head('GET /t HTTP/1.1', 'Host: x', 'Connection: close'),
    head('GET /t HTTP/1.1', 'Host: x', 'Connection: keep-alive, Upgrade'),
    head('GET /t HTTP/1.1', 'Host: x', 'TE: trailers'),
    head('GET /t HTTP/1.1', 'Host: x', `X-Big: ${'a'.repeat(17_000)}`),
  ];
  for (const text of declined) assert.equal(readRequestHead(text), undefined, JSON.stringify(text.slice(0, 80)));
});
