/**
 * The socket lane (src/api/tiles/socket-lane.ts) answers repeats of remembered tiles before
 * node:http parses them, and hands the connection to node:http for anything else. Checked over
 * real TCP against a real server: its answers equal node's, the order of pipelined answers holds
 * across the hand-over, requests split into pieces or sent faster than they are read are all
 * answered, every answer is counted, and shutdown does not wait for its idle connections.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { type ApiFixture, createKey, realdataMissing, startApi } from './helpers.js';
import { exchange, type RawResponse, request } from './raw-http.js';
import { ingestRealdataSurvey, tileGrid } from './tiles-fixture.js';

/** Headers that differ between any two answers, whoever gives them. */
const VARYING = new Set(['x-request-id', 'server-timing', 'date', 'x-ratelimit-remaining']);

function comparable(response: RawResponse): Record<string, string> {
  return Object.fromEntries(Object.entries(response.headers).filter(([name]) => !VARYING.has(name)));
}

const bySocket = (response: RawResponse) => /\bsocket;dur=0\b/.test(response.headers['server-timing'] ?? '');

describe('socket lane', { skip: realdataMissing }, () => {
  let api: ApiFixture;
  let port: number;
  let key: string;
  let stored = '';
  let partial = '';

  before(async () => {
    api = await startApi();
    port = Number(new URL(api.baseUrl).port);
    key = (await createKey(api.services, 'socket')).key;
    const survey = await ingestRealdataSurvey(api.services, api.dir, 'fieldimager-ws5/odm_orthophoto.tif', {
      id: '3b9d2c1e-4f5a-4b6c-9d7e-8f9a0b1c2d3e',
      captureDate: '2025-06-01',
    });
    const asset = survey.assets.Vert;
    assert.ok(asset);
    const z = asset.maxZoom;
    const { column, row } = tileGrid(z);
    for (let y = row(asset.bounds.maxY); y <= row(asset.bounds.minY) && !(stored && partial); y++) {
      for (let x = column(asset.bounds.minX); x <= column(asset.bounds.maxX); x++) {
        const r = await api.get(`/tiles/v3/Vert/${z}/${x}/${y}.img?apikey=${key}`);
        await r.arrayBuffer();
        if (/passthrough;dur=0/.test(r.headers.get('server-timing') ?? '')) stored ||= `${z}/${x}/${y}`;
        else if (r.status === 200) partial ||= `${z}/${x}/${y}`;
      }
    }
    assert.ok(stored && partial, 'a pass-through tile and a drawn one');
  });
  after(async () => api.close());

  const storedPath = (k = key) => `/tiles/v3/Vert/${stored}.jpg?apikey=${k}`;

  test('a remembered tile is answered from the socket exactly as node:http answers it', async () => {
    // The first request of a connection that then asks for /health is node's: it goes first.
    const path = storedPath();
    const viaNode = await exchange(port, [request('/health') + request(path)], [false, false]);
    viaNode.socket.destroy();
    const node = viaNode.responses[1] as RawResponse;
    assert.equal(node.status, 200);
    assert.ok(!bySocket(node), 'node:http answered');
    const viaSocket = await exchange(port, [request(path)], [false]);
    viaSocket.socket.destroy();
    const socket = viaSocket.responses[0] as RawResponse;
    assert.ok(bySocket(socket), 'the socket lane answered');
    assert.equal(socket.status, 200);
    assert.deepEqual(comparable(socket), comparable(node));
    assert.ok(socket.body.equals(node.body), 'the same bytes');
    assert.match(socket.headers.date ?? '', /^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    assert.equal(socket.headers.connection, 'keep-alive');

    // And a 304, with the caller's request id kept.
    const etag = socket.headers.etag as string;
    const asked = [`If-None-Match: W/"other", ${etag}`, 'X-Request-Id: trace-42'];
    const node304 = await exchange(port, [request('/health') + request(path, asked)], [false, false]);
    node304.socket.destroy();
    const socket304 = await exchange(port, [request(path, asked)], [false]);
    socket304.socket.destroy();
    const [fromNode, fromSocket] = [node304.responses[1] as RawResponse, socket304.responses[0] as RawResponse];
    assert.ok(bySocket(fromSocket) && !bySocket(fromNode));
    assert.equal(fromSocket.status, 304);
    assert.deepEqual(comparable(fromSocket), comparable(fromNode));
    assert.equal(fromSocket.headers['x-request-id'], 'trace-42');
    assert.equal(fromSocket.body.length, 0);
  });

  test('pipelined requests are answered in order across the hand-over to node:http', async () => {
    const path = storedPath();
    const first = await api.get(path);
    await first.arrayBuffer();
    const etag = first.headers.get('etag') as string;
    const sent = [
      request(path),
      request(path, [`If-None-Match: ${etag}`]),
      request(`/tiles/v3/Vert/${partial}.png?apikey=${key}`),
      request(path),
      request(path, [], 'HEAD'),
      request(`/tiles/v3/Vert/25/0/0.jpg?apikey=${key}`),
      request('/health'),
    ];
    const { responses, socket } = await exchange(
      port,
      [sent.join('')],
      [false, false, false, false, true, false, false],
    );
    socket.destroy();
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 304, 200, 200, 200, 400, 200],
    );
    assert.deepEqual(
      responses.map(bySocket),
      [true, true, false, false, false, false, false],
      'the socket lane answers until the first request it cannot answer at once',
    );
    assert.equal(responses[2]?.headers['content-type'], 'image/png');
    assert.ok(responses[3]?.body.equals(responses[0]?.body as Buffer), 'node gives the same tile');
    assert.equal(responses[4]?.headers['content-length'], responses[0]?.headers['content-length']);
    assert.equal(JSON.parse(responses[5]?.body.toString() ?? '{}').code, 'INVALID_PARAMETER');
  });

  test('a request in pieces, and many sent before any is read, are all answered', async () => {
    const path = storedPath();
    const bytes = Buffer.from(request(path) + request(path));
    const pieces = [...bytes].map((byte) => Buffer.from([byte]));
    const split = await exchange(port, pieces.slice(0, 40), [], { timeoutMs: 100 });
    const rest = await exchange(port, pieces.slice(40), [false, false], { socket: split.socket });
    rest.socket.destroy();
    assert.deepEqual(
      rest.responses.map((r) => [r.status, bySocket(r)]),
      [
        [200, true],
        [200, true],
      ],
    );
    // 300 tiles asked for at once: more than the socket's buffer, so the lane waits for the reader.
    const many = await exchange(port, [request(path).repeat(300)], new Array(300).fill(false), { timeoutMs: 30_000 });
    many.socket.destroy();
    assert.equal(many.responses.length, 300);
    assert.ok(
      many.responses.every((r) => r.status === 200 && bySocket(r) && r.body.equals(rest.responses[0]?.body as Buffer)),
    );
  });

  test('every answer counts against the key; over the limit, a revoked key, node answers', async () => {
    const limited = await createKey(api.services, 'socket-limited');
    await api.services.accounts.setTileRateLimit(limited.account.id, 3, 60);
    const path = storedPath(limited.key);
    const first = await exchange(port, [request('/health') + request(path)], [false, false]);
    first.socket.destroy();
    assert.equal(first.responses[1]?.headers['x-ratelimit-remaining'], '2');
    const { responses, socket } = await exchange(port, [request(path).repeat(3)], [false, false, false]);
    socket.destroy();
    assert.deepEqual(
      responses.map((r) => [r.status, r.headers['x-ratelimit-remaining'], bySocket(r)]),
      [
        [200, '1', true],
        [200, '0', true],
        [429, '0', false],
      ],
    );
    assert.ok(Number(responses[2]?.headers['retry-after']) >= 1);
    assert.equal(JSON.parse(responses[2]?.body.toString() ?? '{}').code, 'RATE_LIMITED');

    const own = await createKey(api.services, 'socket-revoked');
    const ownPath = storedPath(own.key);
    (await exchange(port, [request('/health') + request(ownPath)], [false, false])).socket.destroy();
    const open = await exchange(port, [request(ownPath)], [false]);
    assert.ok(bySocket(open.responses[0] as RawResponse));
    await api.services.accounts.revokeApiKey(own.keyId);
    const refused = await exchange(port, [request(ownPath)], [false], { socket: open.socket });
    refused.socket.destroy();
    assert.equal(refused.responses[0]?.status, 401, 'refused at once, on the same connection');
  });

  test('odd heads go to node:http, which judges them', async () => {
    const path = storedPath();
    const cases: [string, number][] = [
      [`GET ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`, 200],
      [`GET ${path} HTTP/1.1\r\n\r\n`, 400],
      [`GET ${path} HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n`, 200],
      [`GET ${path} HTTP/1.0\r\nHost: test\r\n\r\n`, 200],
      [`GET ${path} HTTP/1.1\r\nHost: test\r\nX-Control: \x01\r\n\r\n`, 400],
      [`GET ${path} HTTP/1.1\r\nHost: test\r\nX-Latin1: caf\xe9\r\n\r\n`, 200],
      [`GET ${path} HTTP/1.1\nHost: test\n\n`, 400],
      [`GET ${path} HTTP/1.1\r\nHost: test\r\nX-Folded: a\r\n b\r\n\r\n`, 400],
      [`GET ${path} HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nab`, 200],
      [`GET ${path} HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 200],
      [`GET ${path} HTTP/1.1\r\nHost: test\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      [`get ${path} HTTP/1.1\r\nHost: test\r\n\r\n`, 400],
    ];
    for (const [sent, status] of cases) {
      const { responses, socket } = await exchange(port, [Buffer.from(sent, 'latin1')], [false], { timeoutMs: 5_000 });
      socket.destroy();
      assert.equal(responses[0]?.status, status, JSON.stringify(sent.replace(path, '<path>').slice(0, 100)));
      assert.ok(!bySocket(responses[0] as RawResponse), 'node:http answered');
    }
    const { responses, socket } = await exchange(port, [cases[0]?.[0] as string], [false]);
    assert.equal(responses[0]?.headers.connection, 'close');
    const closed = socket.closed || (await Promise.race([once(socket, 'close').then(() => true), delay(5_000, false)]));
    assert.ok(closed, 'Connection: close is honoured');
  });

  test('shutdown closes the connections idle in the lane instead of waiting for them', async () => {
    const own = await startApi();
    const ownPort = Number(new URL(own.baseUrl).port);
    const ownKey = (await createKey(own.services, 'socket-shutdown')).key;
    await ingestRealdataSurvey(own.services, own.dir, 'fieldimager-ws5/odm_orthophoto.tif', {
      id: '4c0e3d2f-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
      captureDate: '2025-06-01',
    });
    const path = `/tiles/v3/Vert/${stored}.jpg?apikey=${ownKey}`;
    assert.equal((await own.get(path)).status, 200);
    const idle = await exchange(ownPort, [request(path)], [false]);
    assert.ok(bySocket(idle.responses[0] as RawResponse));
    const closedByServer = new Promise<void>((resolve) => idle.socket.once('close', () => resolve()));
    const started = Date.now();
    await own.close();
    await closedByServer;
    assert.ok(Date.now() - started < 5_000, `closed in ${Date.now() - started} ms`);
  });
});
