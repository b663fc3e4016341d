import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createServer as createTlsServer } from 'node:tls';
import { type BodySink, SocketGetPool } from '../../src/storage/socket-get-pool.js';

/** Each request's path, and the socket to answer it on, as a scripted server sees them. */
type Answer = (path: string, socket: Socket, connection: number) => void;

interface Scripted {
  origin: URL;
  /** Connections accepted so far, and the most open at once. */
  connections(): { accepted: number; mostOpen: number };
  close(): Promise<void>;
}

/** A plain TCP server, or `tlsServer` (a tls.Server) when given. */
async function scripted(answer: Answer, tlsServer?: Server): Promise<Scripted> {
  const server = tlsServer ?? createServer();
  const open = new Set<Socket>();
  let accepted = 0;
  let mostOpen = 0;
  server.on(tlsServer ? 'secureConnection' : 'connection', (socket: Socket) => {
    const connection = ++accepted;
    open.add(socket);
    mostOpen = Math.max(mostOpen, open.size);
    let asked = '';
    socket.on('data', (bytes) => {
      asked += bytes.toString('latin1');
      for (let end = asked.indexOf('\r\n\r\n'); end !== -1; end = asked.indexOf('\r\n\r\n')) {
        const path = asked.slice(4, asked.indexOf(' ', 4));
        asked = asked.slice(end + 4);
        answer(path, socket, connection);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: new URL(`${tlsServer ? 'https' : 'http'}://127.0.0.1:${port}`),
    connections: () => ({ accepted, mostOpen }),
    close: () => {
      for (const socket of open) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function ok(body: string, extra = ''): string {
  return `HTTP/1.1 206 Partial Content\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
}

/** The body as text; a status other than 206 throws. */
function text(head: { status: number }): BodySink<string> {
  let body = '';
  return {
    write: (buffer, from, to) => {
      body += buffer.toString('latin1', from, to);
    },
    finish: () => {
      if (head.status !== 206) throw new Error(`HTTP ${head.status}`);
      return body;
    },
  };
}

const servers: Scripted[] = [];
const pools: SocketGetPool[] = [];
after(async () => {
  for (const pool of pools) pool.close();
  for (const server of servers) await server.close();
});

async function setUp(answer: Answer, maxConnections = 8, server?: Server) {
  const store = await scripted(answer, server);
  servers.push(store);
  const pool = new SocketGetPool({ origin: store.origin, maxConnections, idleMs: 5_000 });
  pools.push(pool);
  return { store, pool, get: (path: string, timeoutMs = 2_000) => pool.get(path, 'host: x\r\n', text, timeoutMs) };
}

describe('GETs on kept-alive connections read into one buffer (socket-get-pool.ts)', () => {
  it('answers GETs one after another on one connection, the bodies whole', async () => {
    const big = 'x'.repeat(300_000);
    const { store, get } = await setUp((path, socket) => socket.write(ok(path === '/big' ? big : path)));
    assert.equal(await get('/a'), '/a');
    assert.equal(await get('/big'), big);
    assert.equal(await get('/c'), '/c');
    assert.equal(store.connections().accepted, 1);
  });

  it('opens no more than its connections at once; the other GETs wait their turn', async () => {
    const { store, get } = await setUp((path, socket) => setTimeout(() => socket.write(ok(path)), 30), 2);
    const paths = ['/1', '/2', '/3', '/4', '/5'];
    assert.deepEqual(await Promise.all(paths.map((path) => get(path))), paths);
    assert.deepEqual(store.connections(), { accepted: 2, mostOpen: 2 });
  });

  it('does not reuse a connection the answer closes, or one answered with more bytes than it framed', async () => {
    const { store, get } = await setUp((path, socket) =>
      socket.write(path === '/close' ? ok(path, 'Connection: close\r\n') : `${ok(path)}EXTRA`),
    );
    assert.equal(await get('/close'), '/close');
    assert.equal(await get('/extra'), '/extra');
    assert.equal(await get('/next'), '/next');
    assert.equal(store.connections().accepted, 3);
  });

  it('sends a GET again on a new connection when a kept-alive one was closed by the server while idle', async () => {
    // The server answers once on each connection, then closes it as the next request arrives
    // (as a store that timed the idle connection out at that moment).
    const answered = new Set<number>();
    const { store, get } = await setUp((path, socket, connection) => {
      if (answered.has(connection)) socket.destroy();
      else {
        answered.add(connection);
        socket.write(ok(path));
      }
    });
    assert.equal(await get('/a'), '/a');
    assert.equal(await get('/b'), '/b');
    assert.equal(await get('/c'), '/c');
    assert.equal(store.connections().accepted, 3);
  });

  it('fails a GET whose answer is cut short, or never comes, within its time; the next GET is answered', async () => {
    const { get } = await setUp((path, socket) => {
      if (path === '/cut') socket.end('HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\n\r\nshort');
      else if (path !== '/hung') socket.write(ok(path));
    });
    await assert.rejects(get('/cut'), /closed in the middle of an answer/);
    const started = performance.now();
    await assert.rejects(get('/hung', 300), /did not answer within 300 ms/);
    const waited = performance.now() - started;
    assert.ok(waited >= 290 && waited < 1_500, `waited ${waited} ms`);
    assert.equal(await get('/after'), '/after');
  });

  it('a body that ends with the connection is whole at its end, and cut short by a reset', async () => {
    const { get } = await setUp((path, socket) => {
      socket.write('HTTP/1.1 206 Partial Content\r\n\r\nto the end');
      setTimeout(() => (path === '/reset' ? socket.resetAndDestroy() : socket.end()), 20);
    });
    assert.equal(await get('/end'), 'to the end');
    await assert.rejects(get('/reset'), /ECONNRESET/);
  });

  it('fails on an answer that is not HTTP, and on a server that refuses the connection', async () => {
    const { get } = await setUp((_, socket) => socket.write('SSH-2.0-OpenSSH\r\n\r\n'));
    await assert.rejects(get('/a'), /not an HTTP\/1.x status line/);
    const refused = new SocketGetPool({ origin: new URL('http://127.0.0.1:1'), maxConnections: 1, idleMs: 1_000 });
    await assert.rejects(refused.get('/', 'host: x\r\n', text, 2_000), /ECONNREFUSED/);
    refused.close();
  });

  it('an error answer reaches the sink, whose throw fails the GET; the connection stays in use', async () => {
    const { store, get } = await setUp((path, socket) =>
      socket.write(
        path === '/missing'
          ? 'HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n<Code\r\n0\r\n\r\n'
          : ok(path),
      ),
    );
    await assert.rejects(get('/missing'), /HTTP 404/);
    assert.equal(await get('/a'), '/a');
    assert.equal(store.connections().accepted, 1);
  });

  it('closing fails the GETs under way and refuses later ones', async () => {
    const { pool, get } = await setUp(() => {});
    const pending = get('/hung', 10_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    pool.close();
    await assert.rejects(pending, /closed/);
    await assert.rejects(get('/later'), /closed/);
  });

  it('speaks TLS to an https origin', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nadir-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
          '-days',
          '1',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
        ],
        { stdio: 'ignore' },
      );
      const cert = readFileSync(join(dir, 'cert.pem'));
      const server = createTlsServer({ key: readFileSync(join(dir, 'key.pem')), cert });
      const store = await scripted((path, socket) => socket.write(ok(path)), server);
      servers.push(store);
      // The test's own certificate authority, as NODE_EXTRA_CA_CERTS would add it.
      const pool = new SocketGetPool({ origin: store.origin, maxConnections: 1, idleMs: 1_000, ca: cert });
      pools.push(pool);
      assert.equal(await pool.get('/a', 'host: x\r\n', text, 2_000), '/a');
      assert.equal(await pool.get('/b', 'host: x\r\n', text, 2_000), '/b');
      assert.equal(store.connections().accepted, 1);
      const untrusting = new SocketGetPool({ origin: store.origin, maxConnections: 1, idleMs: 1_000 });
      pools.push(untrusting);
      await assert.rejects(untrusting.get('/a', 'host: x\r\n', text, 2_000), /self[- ]signed/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
