import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ResponseParser } from '../../src/storage/response-parser.js';

/** What a client makes of an answer: its status, body and whether the connection may be reused; or that it failed. */
interface Framed {
  failed: boolean;
  status?: number;
  body?: string;
  keepAlive?: boolean;
  contentType?: string;
}

const binary = Buffer.from([0, 13, 10, 13, 10, 255, 128, 1]).toString('latin1');

/**
 * Answers as servers send them, and answers no client should take. Each is sent, and the
 * connection closed a moment later (node's client takes an answer and the end of the connection
 * in one read differently from its framing: a 1xx or 304 then reads as a hang-up).
 */
const CORPUS: Record<string, string> = {
  'content-length, a body holding CRLF CRLF and bytes over 127': `HTTP/1.1 206 Partial Content\r\nContent-Type: application/octet-stream\r\nContent-Length: 8\r\nContent-Range: bytes 0-7/100\r\n\r\n${binary}`,
  'chunked, with extensions and trailers': `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n5;name=value\r\nhello\r\nA\r\n, world!!!\r\n0\r\nx-trailer: 1\r\n\r\n`,
  'chunked, upper-case hex and one-byte chunks': `HTTP/1.1 500 Internal Server Error\r\ntransfer-encoding: chunked\r\n\r\n1\r\n<\r\n1\r\nE\r\n1A\r\nrror><Code>SlowDown</Code>\r\n0\r\n\r\n`,
  'a body to the end of the connection': `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end`,
  'HTTP/1.0 with a length': `HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc`,
  'HTTP/1.0 kept alive': `HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\nabc`,
  'connection: close': `HTTP/1.1 206 Partial Content\r\nConnection: close\r\nContent-Length: 2\r\n\r\nab`,
  'no body: 204': `HTTP/1.1 204 No Content\r\nContent-Type: text/plain\r\n\r\n`,
  'no body: 304 with a length': `HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n`,
  'a length of 0': `HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n`,
  '100 Continue first': `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 206 Partial Content\r\nContent-Length: 4\r\n\r\nbody`,
  '103 Early Hints first': `HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx`,
  'repeated fields and spaces around values': `HTTP/1.1 200 OK\r\nx-amz-meta-a:  one \r\nx-amz-meta-a: two\r\nContent-Length:   2  \r\n\r\nok`,
  'no reason phrase': `HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx`,
  'HTTP/1.0 without keep-alive': `HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc`,
  'a close-delimited transfer coding': `HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nabc`,
  'transfer coding gzip, chunked': `HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n`,
  'a length cut short': `HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\n\r\nshort`,
  'chunks cut short': `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel`,
  'a head cut short': `HTTP/1.1 200 OK\r\nContent-Len`,
  'not HTTP': `HTTX/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx`,
  'a status of two digits': `HTTP/1.1 20 OK\r\nContent-Length: 1\r\n\r\nx`,
  'a length that is not a number': `HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\nx`,
  'two different lengths': `HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy`,
  'bare LF line ends': `HTTP/1.1 200 OK\nContent-Length: 2\n\nok`,
  'a bare LF after chunk data': `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\n0\r\n\r\n`,
  'a space after the chunk size': `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2 \r\nab\r\n0\r\n\r\n`,
  'a folded field': `HTTP/1.1 200 OK\r\nX-A: b\r\n c\r\nContent-Length: 2\r\n\r\nok`,
  'a length with a sign': `HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok`,
  'two equal lengths': `HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok`,
  'a chunk size that is not hex': `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n`,
  'chunk data longer than its size': `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n`,
  'a field without a colon': `HTTP/1.1 200 OK\r\nContent-Length 1\r\n\r\nx`,
  'a space before the colon': `HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\nx`,
  'both chunked and a length': `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n`,
  'a head over 16 KiB': `HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(17 * 1024)}\r\nContent-Length: 1\r\n\r\nx`,
};

/** Serves each corpus answer (by its index in the request path) on a plain TCP server. */
async function rawServer(): Promise<{ port: number; close(): Promise<void> }> {
  const answers = Object.values(CORPUS);
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    let asked = '';
    socket.on('data', (bytes) => {
      asked += bytes.toString('latin1');
      const request = /^GET \/(\d+) /.exec(asked);
      if (!request || !asked.includes('\r\n\r\n')) return;
      asked = '';
      socket.write(Buffer.from(answers[Number(request[1])] as string, 'latin1'));
      setTimeout(() => socket.end(), 30);
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** node:http's client on one corpus answer. */
function nodeFrames(port: number, index: number, agent: Agent): Promise<Framed> {
  return new Promise((resolve) => {
    const outgoing = request({ host: '127.0.0.1', port, path: `/${index}`, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', () => resolve({ failed: true }));
      response.on('aborted', () => resolve({ failed: true }));
      response.on('end', () =>
        resolve({
          failed: false,
          status: response.statusCode,
          body: Buffer.concat(chunks).toString('latin1'),
          keepAlive: outgoing.shouldKeepAlive,
          contentType: response.headers['content-type'],
        }),
      );
    });
    outgoing.on('error', () => resolve({ failed: true }));
    outgoing.end();
  });
}

/** The parser on the same bytes, fed in the pieces `cuts` makes of them, then the connection's end. */
function parserFrames(raw: Buffer, cuts: number[]): Framed {
  const framed: Framed = { failed: false, body: '' };
  const parser = new ResponseParser({
    head: (head) => {
      framed.status = head.status;
      framed.keepAlive = head.keepAlive;
      framed.contentType = head.headers.get('content-type');
    },
    body: (buffer, from, to) => {
      framed.body += buffer.toString('latin1', from, to);
    },
    done: () => {},
  });
  try {
    const edges = [0, ...cuts, raw.length];
    for (let i = 0; i + 1 < edges.length && !parser.done; i++) {
      // Each piece in a buffer of its own with older bytes around it, as a reused read buffer has
      // (bytes that would end a head or a line if read as part of the answer).
      const piece = Buffer.concat([
        Buffer.from('\r\n\r\n'),
        raw.subarray(edges[i], edges[i + 1]),
        Buffer.from('\n\r\n\r\n'),
      ]);
      parser.feed(piece, 4, piece.length - 5);
    }
    parser.end();
  } catch {
    return { failed: true };
  }
  return framed;
}

describe('HTTP answers framed from bytes (response-parser.ts)', () => {
  let server: Awaited<ReturnType<typeof rawServer>>;
  const agent = new Agent({ keepAlive: true });
  before(async () => {
    server = await rawServer();
  });
  after(async () => {
    agent.destroy();
    await server.close();
  });

  it('frames every answer of the corpus as node:http does, however its bytes are cut', async () => {
    const names = Object.keys(CORPUS);
    let failures = 0;
    for (const [index, name] of names.entries()) {
      const raw = Buffer.from(CORPUS[name] as string, 'latin1');
      const expected = await nodeFrames(server.port, index, agent);
      if (expected.failed) failures++;
      const short = raw.length < 400;
      const cutsList: number[][] = [[]];
      // Every single cut, and every byte on its own, for the short answers; a few cuts for the long one.
      for (let cut = 1; cut < raw.length; cut += short ? 1 : 997) cutsList.push([cut]);
      if (short) cutsList.push(Array.from({ length: raw.length - 1 }, (_, i) => i + 1));
      for (const cuts of cutsList) {
        const framed = parserFrames(raw, cuts);
        if (expected.failed) assert.equal(framed.failed, true, `${name}, cut at ${cuts.slice(0, 3)}: node failed it`);
        else assert.deepEqual(framed, expected, `${name}, cut at ${cuts.slice(0, 3)}`);
      }
    }
    // The corpus holds both kinds: answers node takes, and answers it refuses.
    assert.ok(failures >= 10 && failures < names.length - 10, `node refused ${failures} of ${names.length}`);
  });

  it('says where an answer ended when more bytes follow it', () => {
    const raw = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n', 'latin1');
    let body = '';
    const parser = new ResponseParser({
      head: () => {},
      body: (buffer, from, to) => {
        body += buffer.toString('latin1', from, to);
      },
      done: () => {},
    });
    assert.equal(parser.feed(raw, 0, raw.length), raw.indexOf('okHTTP') + 2);
    assert.equal(body, 'ok');
    assert.equal(parser.done, true);
  });
});
