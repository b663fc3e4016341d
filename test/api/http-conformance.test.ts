/**
 * HTTP conformance (issue 18, item 1): nadir frames every request exactly as plain node:http does.
 *
 * Method. Each case of the corpus below is a byte sequence written to a fresh TCP connection (in
 * one write, in several writes with pauses between them, or one byte per write). It is replayed
 * against three servers in this process:
 *  - nadir, built by the test helpers (startApi) over a temporary data folder with a valid API key,
 *    where `{tile}` is a stored tile of a real survey that the tile lane sends as stored (a
 *    pass-through JPEG; ../shared/realdata; without it, a tile the lane answers 404), and
 *    `{fastify}` the same tile asked so that the lane leaves it to fastify's route (a
 *    percent-encoded parameter name);
 *  - a plain node:http server made with the same options as nadir's (httpServerOptions: the
 *    timeouts; the rest node's defaults) whose handler answers every request at once with a 200
 *    and a Content-Length, as every nadir answer has one;
 *  - nadir's HTTP server (createHttpServer) over a handler that answers 200 but 250 ms late: the
 *    framing must not depend on how late nadir answers, so its statuses and closing must be
 *    node's exactly.
 * The response stream of each is parsed into answers (interim 1xx ones, bodies by Content-Length,
 * chunked or to the close; none for HEAD), and the replay waits until the server closes, or has
 * been silent for a while (for nadir: not before it has given as many answers as node, and when
 * node closed, until it closes too).
 *
 * Compared: node's answers are taken as the truth about framing. A 200 from node means its parser
 * handed over a request: nadir must answer that request too, with its own status for it (a case
 * lists those: 404 for an unknown path, 405 for POST, 401 without a key, ...). Any other status from
 * node (400, 408, 413, 417, 431, and 100 Continue) is node itself answering: nadir must give the
 * same status. The sequences must be equal, answer for answer, and nadir must close the connection
 * exactly when node does (after the same answer) and keep it open when node does. Every nadir answer
 * carries X-Request-Id, and every error is the JSON of decisions.md.
 *
 * Timing. node with an at-once handler answers a request during the same read of the socket that
 * parsed it; nadir answers later. Where that matters (a parse error, CONNECT or the client's
 * half-close after a pipelined request) nadir does what node does with such a handler
 * (api/http/http-server.ts, docs/http.md). Cases that put bad bytes after a good request in a later
 * write pause first (GAP), so that node's reads are the writes; cases split one byte per write keep
 * to requests whose framing does not depend on how the bytes are grouped into reads.
 *
 * The cases run six at a time, each on its own connections (the whole corpus takes a few seconds).
 * Timeouts (slow and stalled heads and bodies, idle connections) are tested below the corpus, with
 * timeouts of 1, 2 and 1.5 s set through the parsed config, against nadir and node alike.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createHttpServer, httpServerOptions } from '../../src/api/http/http-server.js';
import { testClock } from '../support/clock.js';
import { HAVE_REALDATA, REALDATA, writeManifest } from '../support/fixtures.js';
import { type Answer, type Outcome, replay, statusesOf } from '../support/http-replay.js';
import { type ApiFixture, createKey, startApi } from './helpers.js';
import { tileGrid } from './tiles-fixture.js';

/** A status nadir gives, or the status of a tile request: 200 with the real survey, else the lane's 404. */
type Expected = number | 'tile';

interface Case {
  name: string;
  /** The bytes as written, one string per write (latin1); `{tile}` and `{fastify}` are filled in. */
  writes: string[];
  /** nadir's answer to each request node's parser hands over, in order. */
  nadir: Expected[];
  /** Indexes of HEAD requests (their answers have no body). */
  heads?: number[];
  /** Every write one byte at a time. */
  bytewise?: boolean;
  /** Pause between writes, ms. */
  gapMs?: number;
  /** Half-close the connection after the last write. */
  endAfter?: boolean;
}

/** Pause between writes that must be separate reads; longer than node's answers, shorter than SLOW_MS. */
const GAP = 100;
/** How late the handler of the late-answers server answers. */
const SLOW_MS = 250;

/** A request head: `GET path HTTP/1.1`, Host and `extra` header lines. */
function req(path: string, extra: string[] = [], method = 'GET', version = '1.1'): string {
  return [`${method} ${path} HTTP/${version}`, 'Host: nadir.test', ...extra, '', ''].join('\r\n');
}

const health = req('/health');
const tile = req('{tile}');
const bad = 'G@T /health HTTP/1.1\r\nHost: nadir.test\r\n\r\n';
const connectRequest = 'CONNECT nadir.test:443 HTTP/1.1\r\nHost: nadir.test:443\r\n\r\n';
const chunkedHead = (path: string, method = 'GET') => req(path, ['Transfer-Encoding: chunked'], method);
const big = (bytes: number) => `X-Big: ${'a'.repeat(bytes)}`;

const CORPUS: Case[] = [
  // Pipelining: several requests in one write, answered in order; the connection stays open.
  { name: 'one GET /health', writes: [health], nadir: [200] },
  { name: 'one stored tile (the tile lane)', writes: [tile], nadir: ['tile'] },
  { name: 'one tile through fastify', writes: [req('{fastify}')], nadir: ['tile'] },
  {
    name: 'pipelined: tile, /health, fastify tile',
    writes: [tile + health + req('{fastify}')],
    nadir: ['tile', 200, 'tile'],
  },
  {
    name: 'pipelined: tile, /health, fastify tile, one byte per write',
    writes: [tile + health + req('{fastify}')],
    nadir: ['tile', 200, 'tile'],
    bytewise: true,
  },
  {
    name: 'pipelined: tile, unknown path, tile without a key',
    writes: [tile + req('/nowhere') + req('/tiles/v3/Vert/19/1/1.jpg')],
    nadir: ['tile', 404, 401],
  },
  {
    name: 'pipelined: HEAD tile, GET /health',
    writes: [req('{tile}', [], 'HEAD') + health],
    nadir: ['tile', 200],
    heads: [0],
  },
  { name: 'ten pipelined tiles', writes: [tile.repeat(10)], nadir: Array(10).fill('tile') },
  {
    name: 'pipelined, the writes split inside a header line',
    writes: [`${health}GET {tile} HTTP/1.1\r\nHo`, 'st: nadir.test\r\n\r\n'],
    nadir: [200, 'tile'],
    gapMs: GAP,
  },
  { name: 'keep-alive: a second request after a pause', writes: [tile, health], nadir: ['tile', 200], gapMs: GAP },

  // Connection management: `Connection: close` ends the connection after its answer.
  { name: 'Connection: close', writes: [req('/health', ['Connection: close'])], nadir: [200] },
  {
    name: 'Connection: close on /health, then a pipelined request',
    writes: [req('/health', ['Connection: close']) + health],
    nadir: [200, 200],
  },
  {
    name: 'Connection: close on a tile, then a pipelined tile',
    writes: [req('{tile}', ['Connection: close']) + tile],
    nadir: ['tile', 'tile'],
  },
  {
    name: 'Connection: close on a tile, then a pipelined tile, one byte per write',
    writes: [req('{tile}', ['Connection: close']) + tile],
    nadir: ['tile', 'tile'],
    bytewise: true,
  },
  // node answers the first only: the bytes after `Connection: close` fail its parser in the read
  // that carried the second request, and its answer, queued behind the first, dies with the
  // connection.
  {
    name: 'Connection: close on the second of three pipelined requests',
    writes: [tile + req('/health', ['Connection: close']) + tile],
    nadir: ['tile', 200, 'tile'],
  },
  {
    name: 'Connection: close, and the next request in a later write',
    writes: [req('{tile}', ['Connection: close']), health],
    nadir: ['tile', 200],
    gapMs: GAP,
  },
  {
    name: 'Proxy-Connection: close, then a pipelined request',
    writes: [req('/health', ['Proxy-Connection: close']) + health],
    nadir: [200, 200],
  },
  {
    name: 'Connection: keep-alive, close',
    writes: [req('{tile}', ['Connection: keep-alive, close']) + health],
    nadir: ['tile', 200],
  },
  { name: 'the client half-closes after its request', writes: [tile], nadir: ['tile'], endAfter: true },
  {
    name: 'the client half-closes after two pipelined requests',
    writes: [tile + health],
    nadir: ['tile', 200],
    endAfter: true,
  },
  {
    name: 'an incomplete head, then the client half-closes',
    writes: ['GET /health HTTP/1.1\r\nHost: nad'],
    nadir: [],
    endAfter: true,
  },

  // Message bodies: Content-Length and chunked framing, and the conflicts that smuggle requests.
  {
    name: 'GET with a Content-Length body, then a pipelined request',
    writes: [`${req('/health', ['Content-Length: 5'])}hello${tile}`],
    nadir: [200, 'tile'],
  },
  {
    name: 'GET tile with a chunked body, then a pipelined request',
    writes: [`${chunkedHead('{tile}')}5\r\nhello\r\n0\r\n\r\n${health}`],
    nadir: ['tile', 200],
  },
  {
    name: 'chunked body with extensions and trailers, one byte per write',
    writes: [`${chunkedHead('/health')}5;name=value\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n${health}`],
    nadir: [200, 200],
    bytewise: true,
  },
  {
    name: 'Content-Length: 0 then a pipelined request',
    writes: [req('/health', ['Content-Length: 0']) + tile],
    nadir: [200, 'tile'],
  },
  {
    name: 'POST with a body to /health, then a pipelined request',
    writes: [`${req('/health', ['Content-Length: 2000'], 'POST')}${'a'.repeat(2000)}${health}`],
    nadir: [405, 200],
  },
  {
    name: 'POST with a JSON body to a tile, then a pipelined request',
    writes: [`${req('{tile}', ['Content-Type: application/json', 'Content-Length: 2'], 'POST')}{}${health}`],
    nadir: [405, 200],
  },
  {
    name: 'Transfer-Encoding: chunked and Content-Length (CL.TE), one byte per write',
    writes: [`${req('/health', ['Content-Length: 6', 'Transfer-Encoding: chunked'], 'POST')}0\r\n\r\nG${health}`],
    nadir: [],
    bytewise: true,
  },
  {
    name: 'Transfer-Encoding: chunked and Content-Length (CL.TE)',
    writes: [`${req('/health', ['Content-Length: 6', 'Transfer-Encoding: chunked'], 'POST')}0\r\n\r\nG${health}`],
    nadir: [],
  },
  {
    name: 'Content-Length and Transfer-Encoding: chunked (TE.CL), after a pipelined tile in a later write',
    writes: [tile, `${req('/health', ['Transfer-Encoding: chunked', 'Content-Length: 4'])}5c\r\n${health}0\r\n\r\n`],
    nadir: ['tile'],
    gapMs: GAP,
  },
  {
    name: 'Transfer-Encoding: chunked twice',
    writes: [`${req('/health', ['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'])}0\r\n\r\n`],
    nadir: [200],
  },
  {
    name: 'Transfer-Encoding: chunked, identity',
    writes: [`${req('/health', ['Transfer-Encoding: chunked, identity'])}0\r\n\r\n`],
    nadir: [],
  },
  // Not chunked last: node takes the head, then fails on the body (which runs to the close).
  {
    name: 'Transfer-Encoding: gzip (not chunked last)',
    writes: [`${req('/health', ['Transfer-Encoding: gzip'])}0\r\n\r\n`],
    nadir: [200],
  },
  {
    name: 'Transfer-Encoding: xchunked',
    writes: [`${req('/health', ['Transfer-Encoding: xchunked'])}0\r\n\r\n`],
    nadir: [200],
  },
  {
    name: 'Transfer-Encoding with a space before the colon',
    writes: [`${req('/health', ['Transfer-Encoding : chunked'])}0\r\n\r\n`],
    nadir: [],
  },
  {
    name: 'duplicate Content-Length, same value',
    writes: [`${req('/health', ['Content-Length: 1', 'Content-Length: 1'])}a`],
    nadir: [],
  },
  {
    name: 'duplicate Content-Length, different values',
    writes: [`${req('/health', ['Content-Length: 1', 'Content-Length: 2'])}ab`],
    nadir: [],
  },
  { name: 'Content-Length as a list', writes: [`${req('/health', ['Content-Length: 1, 1'])}a`], nadir: [] },
  { name: 'negative Content-Length', writes: [`${req('/health', ['Content-Length: -1'])}`], nadir: [] },
  { name: 'non-numeric Content-Length', writes: [`${req('/health', ['Content-Length: five'])}`], nadir: [] },
  { name: 'Content-Length with a plus sign', writes: [`${req('/health', ['Content-Length: +1'])}a`], nadir: [] },
  {
    name: 'Content-Length beyond 2^64',
    writes: [`${req('/health', ['Content-Length: 99999999999999999999999'])}a`],
    nadir: [],
  },
  {
    name: 'an invalid chunk size, in a later write',
    writes: [chunkedHead('/health'), 'zz\r\nhello\r\n0\r\n\r\n'],
    nadir: [200],
    gapMs: GAP,
  },
  {
    name: 'a chunk extension over 16 KB, in a later write',
    writes: [chunkedHead('/health', 'POST'), `1;${'e'.repeat(20_000)}\r\na\r\n0\r\n\r\n`],
    nadir: [405],
    gapMs: GAP,
  },

  // The head's syntax.
  {
    name: 'obs-fold continuation line',
    writes: ['GET /health HTTP/1.1\r\nHost: nadir.test\r\nX-A: a\r\n b\r\n\r\n'],
    nadir: [],
  },
  { name: 'bare LF line endings', writes: ['GET /health HTTP/1.1\nHost: nadir.test\n\n'], nadir: [] },
  {
    name: 'bare LF line endings, one byte per write',
    writes: ['GET /health HTTP/1.1\nHost: nadir.test\n\n'],
    nadir: [],
    bytewise: true,
  },
  { name: 'a bare CR in a header value', writes: [req('/health', ['X-A: a\rb'])], nadir: [] },
  { name: 'NUL in the request target', writes: [req('/hea\0lth')], nadir: [] },
  { name: 'NUL in a header value', writes: [req('/health', ['X-A: a\0b'])], nadir: [] },
  { name: 'a space before the colon', writes: [req('/health', ['X-A : b'])], nadir: [] },
  { name: 'a header line without a colon', writes: [req('/health', ['Bad Header Without Colon'])], nadir: [] },
  { name: 'an empty header name', writes: [req('/health', [': b'])], nadir: [] },
  { name: 'empty lines before the request line', writes: [`\r\n\r\n${health}`], nadir: [200] },
  {
    name: 'a tab and obs-text in header values',
    writes: [req('/health', ['X-A: a\tb', 'X-B: caf\xe9'])],
    nadir: [200],
  },
  {
    name: 'two spaces in the request line',
    writes: ['GET  /health HTTP/1.1\r\nHost: nadir.test\r\n\r\n'],
    nadir: [200],
  },
  { name: 'a lowercase protocol name', writes: ['GET /health http/1.1\r\nHost: nadir.test\r\n\r\n'], nadir: [] },
  { name: 'HTTP/2.0 in the request line', writes: ['GET /health HTTP/2.0\r\nHost: nadir.test\r\n\r\n'], nadir: [200] },
  { name: 'no protocol version (HTTP/0.9)', writes: ['GET /health\r\n\r\n'], nadir: [200] },

  // Request targets.
  {
    name: 'absolute-form target',
    writes: ['GET http://nadir.test/health HTTP/1.1\r\nHost: nadir.test\r\n\r\n'],
    nadir: [200],
  },
  {
    name: 'absolute-form tile target',
    writes: ['GET http://nadir.test{tile} HTTP/1.1\r\nHost: nadir.test\r\n\r\n'],
    nadir: ['tile'],
  },
  { name: 'asterisk-form: GET *', writes: [`GET * HTTP/1.1\r\nHost: nadir.test\r\n\r\n${health}`], nadir: [400, 200] },
  { name: 'asterisk-form: OPTIONS *', writes: ['OPTIONS * HTTP/1.1\r\nHost: nadir.test\r\n\r\n'], nadir: [400] },
  {
    name: 'a target without the leading slash',
    writes: ['GET health HTTP/1.1\r\nHost: nadir.test\r\n\r\n'],
    nadir: [],
  },
  {
    name: 'percent-encoded traversal under /docs/static',
    writes: [req('/docs/static/..%2F..%2Fetc%2Fpasswd') + req('/docs/static/..%2F..%2Fetc%2Fpasswd', [], 'HEAD')],
    nadir: [404, 404],
    heads: [1],
  },
  { name: 'a 20 KB URL', writes: [req(`/health?junk=${'x'.repeat(20_000)}`)], nadir: [] },

  // HTTP/1.0.
  {
    name: 'HTTP/1.0 without keep-alive: answered, then closed',
    writes: [req('{tile}', [], 'GET', '1.0') + health],
    nadir: ['tile'],
  },
  {
    name: 'HTTP/1.0 with keep-alive, then a pipelined request',
    writes: [
      req('{tile}', ['Connection: keep-alive'], 'GET', '1.0') +
        req('/health', ['Connection: keep-alive'], 'GET', '1.0'),
    ],
    nadir: ['tile', 200],
  },
  {
    name: 'HTTP/1.0 with keep-alive, then a pipelined request, one byte per write',
    writes: [req('/health', ['Connection: keep-alive'], 'GET', '1.0') + req('{tile}', [], 'GET', '1.0')],
    nadir: [200, 'tile'],
    bytewise: true,
  },
  { name: 'HTTP/1.0 without Host', writes: ['GET /health HTTP/1.0\r\n\r\n'], nadir: [200] },

  // Expect.
  {
    name: 'Expect: 100-continue, the body after the 100',
    writes: [req('/health', ['Expect: 100-continue', 'Content-Length: 5']), `hello${tile}`],
    nadir: [200, 'tile'],
    gapMs: GAP,
  },
  {
    name: 'Expect: 100-continue on a tile without a body',
    writes: [req('{tile}', ['Expect: 100-continue'])],
    nadir: ['tile'],
  },

  { name: 'Expect: something else', writes: [req('{tile}', ['Expect: teapot']) + health], nadir: [417, 200] },
  {
    name: 'Expect: something else, one byte per write',
    writes: [req('/health', ['Expect: teapot']) + health],
    nadir: [417, 200],
    bytewise: true,
  },
  {
    name: 'no Host, with Expect: something else',
    writes: ['GET /health HTTP/1.1\r\nExpect: teapot\r\n\r\n'],
    nadir: [400],
  },

  // Sizes.
  { name: 'a 70 KB header', writes: [req('/health', [big(70_000)])], nadir: [] },
  {
    name: 'a 70 KB header on a tile after a pipelined tile, in a later write',
    writes: [tile, req('{tile}', [big(70_000)])],
    nadir: ['tile'],
    gapMs: GAP,
  },
  {
    name: 'many small headers over 16 KB in all',
    writes: [
      req(
        '/health',
        Array.from({ length: 3000 }, (_, i) => `X-${i}: 1234567890`),
      ),
    ],
    nadir: [],
  },
  { name: 'a head just under 16 KB', writes: [req('/health', [big(16_000)])], nadir: [200] },

  // Host.
  { name: 'HTTP/1.1 without Host', writes: ['GET /health HTTP/1.1\r\n\r\n'], nadir: [400] },
  { name: 'a tile without Host', writes: ['GET {tile} HTTP/1.1\r\n\r\n'], nadir: [400] },
  {
    name: 'pipelined: /health, no Host, /health',
    writes: [`${health}GET /health HTTP/1.1\r\n\r\n${health}`],
    nadir: [200, 400, 200],
  },
  {
    name: 'no Host, with Expect: 100-continue',
    writes: ['GET /health HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n', 'ok'],
    nadir: [400],
    gapMs: GAP,
  },
  { name: 'two Host headers', writes: [req('/health', ['Host: other.test'])], nadir: [200] },
  { name: 'an empty Host', writes: ['GET /health HTTP/1.1\r\nHost:\r\n\r\n'], nadir: [200] },

  // Methods.
  { name: 'CONNECT', writes: [connectRequest], nadir: [] },
  { name: 'CONNECT after a pipelined /health', writes: [health + connectRequest], nadir: [200] },
  { name: 'CONNECT after two pipelined tiles', writes: [tile + tile + connectRequest], nadir: ['tile', 'tile'] },
  { name: 'CONNECT in a later write', writes: [tile, connectRequest], nadir: ['tile'], gapMs: GAP },
  {
    name: 'CONNECT after a pipelined tile, one byte per write',
    writes: [tile + connectRequest],
    nadir: ['tile'],
    bytewise: true,
  },
  { name: 'an invalid method', writes: [bad], nadir: [] },
  { name: 'an invalid method after a pipelined tile', writes: [tile + bad], nadir: ['tile'] },
  {
    name: 'an invalid method after a pipelined tile, in a later write',
    writes: [tile, bad],
    nadir: ['tile'],
    gapMs: GAP,
  },
  { name: 'a lowercase method', writes: [req('/health', [], 'get')], nadir: [] },
  { name: 'an unknown method', writes: [req('/health', [], 'FOO')], nadir: [] },
  { name: 'PROPFIND on /health', writes: [req('/health', [], 'PROPFIND')], nadir: [405] },
  { name: 'DELETE on a tile', writes: [req('{tile}', [], 'DELETE') + tile], nadir: [405, 'tile'] },
  // Without an upgrade handler node answers it as a plain request and reads nothing after it.
  {
    name: 'Upgrade: websocket, then a pipelined request',
    writes: [req('/health', ['Connection: Upgrade', 'Upgrade: websocket']) + health],
    nadir: [200, 200],
  },
];

/** Headers of `answer` that every nadir answer has. */
function assertNadirAnswer(answer: Answer, head: boolean, where: string): void {
  assert.match(answer.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/, `${where}: X-Request-Id`);
  if (answer.status < 400) return;
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/, `${where}: a JSON error`);
  if (head) return;
  const body = JSON.parse(answer.body.toString()) as { error?: unknown; code?: unknown };
  assert.equal(typeof body.error, 'string', `${where}: error`);
  assert.equal(typeof body.code, 'string', `${where}: code`);
}

/**
 * nadir's expected statuses, from node's outcome and what nadir answers the requests node parsed
 * (0 where node parsed a request the case says nothing of: a broken case).
 */
function expectedFromNode(node: Outcome, nadir: number[]): number[] {
  let request = 0;
  return statusesOf(node).map((status) => {
    if (status < 200) return status;
    const own = nadir[request++];
    return status !== 200 ? status : (own ?? 0);
  });
}

describe('HTTP conformance: nadir frames requests as plain node:http does', () => {
  let api: ApiFixture;
  let reference: Server;
  let slow: Server;
  const ports = { nadir: 0, node: 0, slow: 0 };
  const outcomes = new Map<string, { node: Outcome; nadir: Outcome; slow: Outcome; expected: number[] }>();
  let tileStatus = 404;

  before(async () => {
    const clock = testClock();
    api = await startApi({ now: clock.now });
    const { key } = await createKey(api.services, 'conformance');
    let tilePath = `/tiles/v3/Vert/19/1/1.jpg?apikey=${key}`;
    if (HAVE_REALDATA) {
      const id = '4e0c3a1f-7b2d-4c5e-9a8f-6d1e2f3a4b5c';
      const manifest = await writeManifest(api.dir, id, {
        id,
        captureDate: '2025-06-01',
        firstPhotoTime: '2025-06-01T15:00:00Z',
        lastPhotoTime: '2025-06-01T16:00:00Z',
        tags: [],
        assets: { Vert: join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif') },
      });
      const asset = (await api.services.ingestor.ingestManifestFile(manifest)).assets.Vert;
      assert.ok(asset);
      const { column, row } = tileGrid(asset.maxZoom);
      const { minX, minY, maxX, maxY } = asset.bounds;
      const z = asset.maxZoom;
      const x = column((minX + maxX) / 2);
      const y = row((minY + maxY) / 2);
      tilePath = `/tiles/v3/Vert/${z}/${x}/${y}.jpg?apikey=${key}`;
      const first = await api.get(tilePath);
      assert.equal(first.status, 200);
      assert.match(
        first.headers.get('server-timing') ?? '',
        /passthrough;dur=0.*lane;dur=0/,
        'the lane sends it as stored',
      );
      tileStatus = 200;
    }
    const through = await api.get(tilePath.replace('apikey=', '%61pikey='));
    assert.equal(through.status, tileStatus);
    assert.doesNotMatch(through.headers.get('server-timing') ?? '', /\blane;/, 'fastify answers the {fastify} tile');

    reference = createServer(httpServerOptions(api.services.config.http), (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      response.end('ok');
    });
    // nadir's HTTP server over a handler that answers late: its framing must not depend on when.
    slow = createHttpServer(api.services.config.http, (_request, response) => {
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
        response.end('ok');
      }, SLOW_MS);
    });
    for (const server of [reference, slow]) {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    }
    ports.node = (reference.address() as AddressInfo).port;
    ports.slow = (slow.address() as AddressInfo).port;
    ports.nadir = Number(new URL(api.baseUrl).port);

    const fill = (text: string) =>
      text.replaceAll('{tile}', tilePath).replaceAll('{fastify}', tilePath.replace('apikey=', '%61pikey='));
    const run = async (c: Case) => {
      const writes = c.writes.map(fill);
      const methods = Array.from({ length: Math.max(0, ...(c.heads ?? [])) + 1 }, (_, i) =>
        c.heads?.includes(i) ? 'HEAD' : 'GET',
      );
      const options = { methods, bytewise: c.bytewise, gapMs: c.gapMs, endAfter: c.endAfter } as const;
      const node = await replay(ports.node, writes, options);
      const expected = expectedFromNode(
        node,
        c.nadir.map((s) => (s === 'tile' ? tileStatus : s)),
      );
      const finals = statusesOf(node).filter((s) => s >= 200).length;
      const like = { ...options, minAnswers: finals, awaitClose: node.closed };
      const [nadir, late] = await Promise.all([replay(ports.nadir, writes, like), replay(ports.slow, writes, like)]);
      outcomes.set(c.name, { node, nadir, slow: late, expected });
    };
    const queue = [...CORPUS];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let c = queue.shift(); c; c = queue.shift()) await run(c);
      }),
    );
  });
  after(async () => {
    for (const server of [reference, slow]) await new Promise<void>((resolve) => server.close(() => resolve()));
    await api.close();
  });

  test('the corpus has at least 40 cases, with distinct names', () => {
    assert.ok(CORPUS.length >= 40);
    assert.equal(new Set(CORPUS.map((c) => c.name)).size, CORPUS.length);
  });

  test('what node would answer itself, nadir answers in its JSON, with the codes of the error table', () => {
    const answer = (name: string, index: number) => {
      const found = outcomes.get(name)?.nadir.answers.filter((a) => a.status >= 200)[index];
      assert.ok(found, `${name}: answer ${index + 1}`);
      return { status: found.status, code: (JSON.parse(found.body.toString()) as { code: string }).code, found };
    };
    const noHost = answer('HTTP/1.1 without Host', 0);
    assert.deepEqual([noHost.status, noHost.code], [400, 'BAD_REQUEST']);
    assert.equal(noHost.found.headers.connection, 'close', 'as node: the connection closes after it');
    for (const [name, index, status, code] of [
      ['asterisk-form: GET *', 0, 400, 'BAD_REQUEST'],
      ['percent-encoded traversal under /docs/static', 0, 404, 'NOT_FOUND'],
      ['Expect: something else', 0, 417, 'EXPECTATION_FAILED'],
      ['a 70 KB header', 0, 431, 'HEADERS_TOO_LARGE'],
      ['a chunk extension over 16 KB, in a later write', 1, 413, 'CONTENT_TOO_LARGE'],
      ['an invalid method', 0, 400, 'BAD_REQUEST'],
    ] as [string, number, number, string][]) {
      const got = answer(name, index);
      assert.deepEqual([got.status, got.code], [status, code], name);
    }
  });

  for (const c of CORPUS) {
    test(c.name, (t) => {
      const outcome = outcomes.get(c.name);
      assert.ok(outcome, 'replayed');
      const { node, nadir, slow, expected } = outcome;
      const show = (o: Outcome) => `${JSON.stringify(statusesOf(o))}${o.closed ? ' closed' : ' open'}`;
      const story = `node ${show(node)}, nadir ${show(nadir)}, late answers ${show(slow)}`;
      t.diagnostic(story);
      assert.equal(node.leftover.length, 0, `node's answers parse (${story})`);
      assert.equal(
        nadir.leftover.length,
        0,
        `nadir's answers parse (${story}): ${nadir.leftover.toString('latin1', 0, 200)}`,
      );
      assert.ok(!expected.includes(0), `node parsed a request the case does not expect (${story})`);
      assert.deepEqual(statusesOf(nadir), expected, `the same answers (${story})`);
      assert.equal(nadir.closed, node.closed, `closed where node closes (${story})`);
      assert.deepEqual(statusesOf(slow), statusesOf(node), `late answers, the same framing (${story})`);
      assert.equal(slow.closed, node.closed, `late answers, closed where node closes (${story})`);
      let request = 0;
      for (const answer of nadir.answers) {
        if (answer.status < 200) continue;
        assertNadirAnswer(answer, c.heads?.includes(request) ?? false, `${c.name}: answer ${request + 1}`);
        request++;
      }
    });
  }
});

/** A head that never ends: a header value sent one byte at a time, `pauseMs` apart. */
function slowHead(pauseMs: number, bytes: number): { writes: string[]; gapMs: number } {
  return {
    writes: ['GET /health HTTP/1.1\r\nHost: nadir.test\r\nX-Slow: ', ...Array(bytes).fill('a')],
    gapMs: pauseMs,
  };
}

describe('HTTP conformance: slow and stalled requests time out as in node:http', () => {
  const HEADERS_MS = 1_000;
  const REQUEST_MS = 2_000;
  const KEEP_ALIVE_MS = 1_500;
  /** When a timed-out connection must be closed by: the timeout, node's check interval, slack for a loaded machine. */
  const within = (timeoutMs: number) => timeoutMs + 250 + 1_000;
  let api: ApiFixture;
  let reference: Server;
  /** nadir's HTTP server over a handler that reads the whole body before it answers. */
  let bodyReader: Server;
  const ports = { nadir: 0, node: 0, bodyReader: 0 };
  let tilePath = '';
  /** Every scenario starts in `before`, all at once (they mostly wait); each test awaits its own. */
  const runs: Record<string, Promise<Outcome[]>> = {};

  /** The outcome of a slow head on a fresh connection, or on a kept-alive one after `first` (two outcomes). */
  async function slowHeadOn(port: number, first?: string): Promise<Outcome[]> {
    const socket = connect(port, '127.0.0.1');
    try {
      const before = first === undefined ? [] : [await replay(port, [first], { minAnswers: 1 }, socket)];
      const { writes, gapMs } = slowHead(200, 40);
      return [...before, await replay(port, writes, { gapMs, awaitClose: true, timeoutMs: 8_000 }, socket)];
    } finally {
      socket.destroy();
    }
  }

  before(async () => {
    api = await startApi({
      now: testClock().now,
      env: {
        NADIR_HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
        NADIR_HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
        NADIR_HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
      },
    });
    const { key } = await createKey(api.services, 'timeouts');
    // No survey here: the lane answers this tile 404 NO_IMAGERY.
    tilePath = `/tiles/v3/Vert/19/1/1.jpg?apikey=${key}`;
    reference = createServer(httpServerOptions(api.services.config.http), (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      response.end('ok');
    });
    bodyReader = createHttpServer(api.services.config.http, (request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
        response.end('ok');
      });
    });
    for (const server of [reference, bodyReader]) {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    }
    ports.node = (reference.address() as AddressInfo).port;
    ports.bodyReader = (bodyReader.address() as AddressInfo).port;
    ports.nadir = Number(new URL(api.baseUrl).port);

    // A body that stops after two of its 40 bytes; fastify would wait for all of a JSON body.
    const stalledBody = [req('/health', ['Content-Type: application/json', 'Content-Length: 40'], 'POST'), '{"'];
    const slowBody = [req('/health', ['Content-Length: 40']), ...Array(40).fill('a')];
    const scenarios: Record<string, () => Promise<Outcome[]>> = {
      fresh: async () => [...(await slowHeadOn(ports.node)), ...(await slowHeadOn(ports.nadir))],
      afterHealth: async () => [
        ...(await slowHeadOn(ports.node, req('/health'))),
        ...(await slowHeadOn(ports.nadir, req('/health'))),
      ],
      afterTile: () => slowHeadOn(ports.nadir, req(tilePath)),
      // Half send a few bytes and stop, half keep dripping.
      forty: () =>
        Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            replay(ports.nadir, i % 2 ? [slowHead(0, 2).writes.join('')] : slowHead(300, 20).writes, {
              gapMs: 300,
              awaitClose: true,
              timeoutMs: 8_000,
            }),
          ),
        ),
      slowBody: () =>
        Promise.all(
          [ports.node, ports.nadir].map((port) =>
            replay(port, slowBody, { gapMs: 200, awaitClose: true, timeoutMs: 10_000 }),
          ),
        ),
      stalledBody: () =>
        Promise.all(
          [ports.node, ports.nadir, ports.bodyReader].map((port) =>
            replay(port, stalledBody, { gapMs: 100, awaitClose: true, timeoutMs: 10_000 }),
          ),
        ),
      halfClosedBody: () =>
        Promise.all(
          [ports.node, ports.nadir, ports.bodyReader].map((port) =>
            replay(port, stalledBody, { gapMs: 100, endAfter: true, awaitClose: true, timeoutMs: 10_000 }),
          ),
        ),
      idle: () =>
        Promise.all(
          [ports.node, ports.nadir].map((port) =>
            replay(port, [req('/health')], { awaitClose: true, timeoutMs: 8_000 }),
          ),
        ),
    };
    for (const [name, scenario] of Object.entries(scenarios)) {
      const run = scenario();
      // Awaited by its test; not an unhandled rejection meanwhile.
      run.catch(() => undefined);
      runs[name] = run;
    }
  });
  after(async () => {
    await Promise.allSettled(Object.values(runs));
    for (const server of [reference, bodyReader]) await new Promise<void>((resolve) => server.close(() => resolve()));
    await api.close();
  });

  function assertTimedOut(outcome: Outcome | undefined, timeoutMs: number, where: string): void {
    assert.ok(outcome, where);
    assert.deepEqual(statusesOf(outcome), [408], `${where}: 408`);
    assert.ok(outcome.closed, `${where}: closed`);
    const after = outcome.closedAfterMs ?? Number.NaN;
    assert.ok(after >= timeoutMs - 50 && after <= within(timeoutMs), `${where}: closed after ${after} ms`);
  }

  test('the timeouts come from the parsed config', () => {
    assert.deepEqual(api.services.config.http, {
      headersTimeoutMs: HEADERS_MS,
      requestTimeoutMs: REQUEST_MS,
      keepAliveTimeoutMs: KEEP_ALIVE_MS,
    });
  });

  test('a slow head on a fresh connection: 408, then the close', async () => {
    const [node, nadir] = await (runs.fresh as Promise<Outcome[]>);
    assertTimedOut(node, HEADERS_MS, 'node');
    assertTimedOut(nadir, HEADERS_MS, 'nadir');
    assertNadirAnswer(nadir?.answers[0] as Answer, false, 'the 408');
  });

  test('a slow head on a kept-alive connection, after /health or a tile: 408, then the close', async () => {
    const [nodeFirst, node, nadirFirst, nadir] = await (runs.afterHealth as Promise<Outcome[]>);
    assert.deepEqual(statusesOf(nodeFirst as Outcome), [200]);
    assertTimedOut(node, HEADERS_MS, 'node');
    assert.deepEqual(statusesOf(nadirFirst as Outcome), [200]);
    assertTimedOut(nadir, HEADERS_MS, 'nadir after /health');
    const [tileFirst, afterTile] = await (runs.afterTile as Promise<Outcome[]>);
    const tileAnswer = tileFirst?.answers[0];
    assert.equal(tileAnswer?.status, 404);
    assert.match(tileAnswer?.headers['server-timing'] ?? '', /\blane;dur=0\b/, 'the lane answered the first');
    assertTimedOut(afterTile, HEADERS_MS, 'nadir after a tile');
  });

  test('forty stalled or dripping heads at once all time out', async () => {
    const outcomes = await (runs.forty as Promise<Outcome[]>);
    for (const [i, outcome] of outcomes.entries()) assertTimedOut(outcome, HEADERS_MS, `connection ${i}`);
  });

  test('a slow body: the request is answered, then 408 at the request timeout, then the close', async () => {
    const [node, nadir] = await (runs.slowBody as Promise<Outcome[]>);
    for (const [outcome, who] of [
      [node, 'node'],
      [nadir, 'nadir'],
    ] as [Outcome, string][]) {
      assert.deepEqual(statusesOf(outcome), [200, 408], who);
      assert.ok(outcome.closed, `${who}: closed`);
      const after = outcome.closedAfterMs ?? Number.NaN;
      assert.ok(after >= REQUEST_MS - 50 && after <= within(REQUEST_MS), `${who}: closed after ${after} ms`);
    }
  });

  test('a stalled body: answered at once, then 408 at the request timeout, then the close', async () => {
    const [node, nadir, reader] = await (runs.stalledBody as Promise<Outcome[]>);
    for (const [outcome, who, statuses] of [
      [node, 'node', [200, 408]],
      // POST: nadir's 405, given without waiting for the body (fastify would read it first).
      [nadir, 'nadir', [405, 408]],
      // A handler that waits for the body it never gets: the connection still ends on time.
      [reader, 'a handler reading the body', [408]],
    ] as [Outcome, string, number[]][]) {
      assert.deepEqual(statusesOf(outcome), statuses, who);
      assert.ok(outcome.closed, `${who}: closed`);
      const after = outcome.closedAfterMs ?? Number.NaN;
      assert.ok(after >= REQUEST_MS - 50 && after <= within(REQUEST_MS), `${who}: closed after ${after} ms`);
    }
  });

  test('a body cut short by a half-close: the connection ends', async () => {
    const [node, nadir, reader] = await (runs.halfClosedBody as Promise<Outcome[]>);
    for (const [outcome, who, statuses] of [
      [node, 'node', [200, 400]],
      [nadir, 'nadir', [405, 400]],
      // Waiting for the rest of the body, for a grace of 2 s.
      [reader, 'a handler reading the body', [400]],
    ] as [Outcome, string, number[]][]) {
      assert.deepEqual(statusesOf(outcome), statuses, who);
      assert.ok(outcome.closed, `${who}: closed`);
      const after = outcome.closedAfterMs ?? Number.NaN;
      assert.ok(after <= 2_000 + 1_500, `${who}: closed after ${after} ms`);
    }
  });

  test('an idle kept-alive connection is closed after the keep-alive timeout, without an answer', async () => {
    const [node, nadir] = await (runs.idle as Promise<Outcome[]>);
    for (const [outcome, who] of [
      [node, 'node'],
      [nadir, 'nadir'],
    ] as [Outcome, string][]) {
      assert.deepEqual(statusesOf(outcome), [200], who);
      assert.ok(outcome.closed, `${who}: closed`);
      const after = outcome.closedAfterMs ?? Number.NaN;
      assert.ok(after >= KEEP_ALIVE_MS - 50 && after <= KEEP_ALIVE_MS + 1_500, `${who}: closed after ${after} ms`);
    }
  });
});
