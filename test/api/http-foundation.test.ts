import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CoverageAnswers } from '../../src/coverage/coverage-answers.js';
import { type ApiFixture, createKey, errorBody, startApi } from './helpers.js';

/** What every endpoint shares: error shape, request id, Server-Timing, logs, health, OpenAPI. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Sends raw bytes (what fetch refuses to send) and returns the raw answer. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('HTTP foundation', () => {
  let api: ApiFixture;
  let key: string;

  before(async () => {
    api = await startApi();
    key = (await createKey(api.services, 'acme')).key;
  });
  after(() => api.close());

  const coverage = () => `/staticmap/v2/coverage.json?apikey=${key}&point=10,50&radius=50&resources=Vert`;

  it('every response carries X-Request-Id and Server-Timing, success or error', async () => {
    for (const path of ['/health', coverage(), '/nowhere', '/staticmap/v2/coverage.json', '/%zz', '/openapi.json']) {
      const response = await api.get(path);
      await response.arrayBuffer();
      assert.match(response.headers.get('x-request-id') ?? '', UUID, path);
      assert.match(response.headers.get('server-timing') ?? '', /total;dur=\d+(\.\d+)?$/, path);
    }
  });

  it('coverage timing names the steps', async () => {
    const response = await api.get(coverage());
    // Answered by the coverage lane (coverage-lane.ts), which says so.
    assert.match(
      response.headers.get('server-timing') ?? '',
      /^auth;dur=[\d.]+, catalogue;dur=[\d.]+, lane;dur=0, total;dur=[\d.]+$/,
    );
    // Through fastify (the comma percent-encoded), the same steps.
    const routed = await api.get(coverage().replace(/point=([^,&]+),/, 'point=$1%2C'));
    assert.equal(routed.status, 200);
    assert.match(
      routed.headers.get('server-timing') ?? '',
      /^auth;dur=[\d.]+, catalogue;dur=[\d.]+, total;dur=[\d.]+$/,
    );
  });

  it('keeps a sane incoming X-Request-Id and replaces anything else', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const kept = await api.get('/health', { headers: { 'x-request-id': traceparent } });
    assert.equal(kept.headers.get('x-request-id'), traceparent);
    for (const bad of ['has space', 'x'.repeat(129), '{"json":1}', 'semi;colon']) {
      const replaced = await api.get('/health', { headers: { 'x-request-id': bad } });
      assert.match(replaced.headers.get('x-request-id') ?? '', UUID);
    }
  });

  it('an unknown route is a JSON 404 that does not echo the query', async () => {
    const response = await api.get(`/staticmap/v3/coverage.json?apikey=${key}`);
    const body = await errorBody(response);
    assert.equal(response.status, 404);
    assert.equal(body.code, 'NOT_FOUND');
    assert.match(body.error, /\/staticmap\/v3\/coverage\.json/);
    assert.ok(!body.error.includes(key));
    assert.equal((await api.get('/staticmap/v2/coverage.json/')).status, 404);
    assert.equal((await api.get('/STATICMAP/v2/coverage.json')).status, 404);
  });

  it('another method on a GET route is a JSON 405 with Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const response = await api.get(coverage(), { method });
      const body = await errorBody(response);
      assert.equal(response.status, 405, method);
      assert.equal(body.code, 'METHOD_NOT_ALLOWED');
      assert.equal(response.headers.get('allow'), 'GET, HEAD');
    }
  });

  it('HEAD works where GET does; OPTIONS answers a CORS preflight', async () => {
    const head = await api.get(coverage(), { method: 'HEAD' });
    assert.equal(head.status, 200);
    const preflight = await api.get('/staticmap/v2/coverage.json', {
      method: 'OPTIONS',
      headers: { origin: 'https://example.com', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    const ordinary = await api.get('/health');
    assert.equal(ordinary.headers.get('access-control-allow-origin'), '*');
  });

  it('a malformed URL is a JSON 400', async () => {
    const response = await api.get('/staticmap/%zz/coverage.json');
    const body = await errorBody(response);
    assert.equal(response.status, 400);
    assert.equal(body.code, 'BAD_REQUEST');
  });

  it('malformed HTTP is answered with a JSON 400, not a bare socket close', async () => {
    const port = Number(new URL(api.baseUrl).port);
    const answer = await rawRequest(port, 'GET /health HTTP/1.1\r\nHost: x\r\nBad Header Without Colon\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /content-type: application\/json/i);
    assert.match(answer, /"code":"BAD_REQUEST"/);
  });

  it('a URL too long for the HTTP parser is a JSON 431 with a request id', async () => {
    const response = await api.get(`/staticmap/v2/coverage.json?apikey=${key}&junk=${'x'.repeat(20_000)}`);
    const body = await errorBody(response);
    assert.equal(response.status, 431);
    assert.equal(body.code, 'HEADERS_TOO_LARGE');
    assert.match(response.headers.get('x-request-id') ?? '', UUID);
  });

  it('/health, /ready and /version answer', async () => {
    assert.deepEqual(await (await api.get('/health')).json(), { status: 'ok' });
    assert.deepEqual(await (await api.get('/ready')).json(), {
      status: 'ready',
      database: 'up',
      storage: 'up',
      rateLimits: 'shared',
    });
    const version = (await (await api.get('/version')).json()) as Record<string, string>;
    assert.equal(version.name, 'nadir');
    assert.match(version.version ?? '', /^\d+\.\d+\.\d+/);
  });

  it('serves an OpenAPI 3.1 document generated from the route schemas, and a docs page', async () => {
    const document = (await (await api.get('/openapi.json')).json()) as {
      openapi: string;
      paths: Record<string, { get: { parameters: Array<{ name: string; required?: boolean }> } }>;
      components: { securitySchemes: Record<string, { type: string; in: string; name: string }> };
    };
    assert.equal(document.openapi, '3.1.0');
    const parameters = document.paths['/staticmap/v2/coverage.json']?.get.parameters ?? [];
    const names = parameters.map((p) => p.name).sort();
    // apikey is documented once, as the security scheme the route requires.
    assert.deepEqual(document.components.securitySchemes.apikeyQuery, { type: 'apiKey', in: 'query', name: 'apikey' });
    assert.deepEqual(names, [
      'fields',
      'filter',
      'limit',
      'offset',
      'overlap',
      'point',
      'radius',
      'resources',
      'since',
      'until',
    ]);
    const required = parameters.filter((p) => p.required).map((p) => p.name);
    assert.deepEqual(required.sort(), ['point', 'radius', 'resources']);
    assert.ok(document.paths['/health'] && document.paths['/ready']);
    const docs = await api.get('/docs');
    assert.equal(docs.status, 200);
    assert.match(docs.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await docs.text(), /swagger/i);
  });
});

describe('HTTP foundation: failures and logs', () => {
  let api: ApiFixture;
  let key: string;
  let failing = false;

  before(async () => {
    api = await startApi({
      adjust: (services) => {
        const catalogue = new Proxy(services.catalogue, {
          get(target, property, receiver) {
            if (property === 'search' && failing) {
              return async () => {
                throw new Error(`disk on fire at /var/secret/path with ${key}`);
              };
            }
            const value = Reflect.get(target, property, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        });
        // The coverage core searches the catalogue it was built on: built again on this one, as composition.ts does.
        const coverage = new CoverageAnswers(catalogue, { maxMb: services.config.coverageCacheMb });
        return { ...services, catalogue, coverage };
      },
    });
    key = (await createKey(api.services, 'acme')).key;
  });
  after(() => api.close());

  it('an unexpected error is a 500 INTERNAL naming the request id, with no message or stack', async () => {
    failing = true;
    try {
      const response = await api.get(`/staticmap/v2/coverage.json?apikey=${key}&point=10,50&radius=50&resources=Vert`);
      const text = await response.clone().text();
      const body = await errorBody(response);
      assert.equal(response.status, 500);
      assert.equal(body.code, 'INTERNAL');
      assert.match(body.error, new RegExp(response.headers.get('x-request-id') ?? 'missing'));
      assert.ok(!/fire|secret|at .*\.ts|stack/i.test(text), text);
    } finally {
      failing = false;
    }
    assert.ok(
      api.logs.some((line) => line.includes('disk on fire')),
      'the cause is in the server log',
    );
  });

  it('logs are JSON lines that never contain an API key or a token', async () => {
    const token = (
      (await (
        await api.get(`/staticmap/v2/coverage.json?apikey=${key}&point=10,50&radius=50&resources=Vert`)
      ).json()) as { transactionToken: string }
    ).transactionToken;
    await api.get(`/staticmap/v2/coverage.json?point=10,50&radius=50&resources=Vert`, {
      headers: { authorization: `Apikey ${key}` },
    });
    await api.get(`/staticmap/v2/surveys/x/Vert.tif?transactionToken=${token}&point=10,50`);
    await api.get(`/staticmap/v2/coverage.json?api%6Bey=${key}&point=10,50&radius=50&resources=Vert`);
    await api.get(`/somewhere/${key}/${token}`);
    await api.get(`/staticmap/v2/coverage.json?APIKEY=${encodeURIComponent(key)}`);
    assert.ok(api.logs.length > 5);
    for (const line of api.logs) {
      JSON.parse(line);
      assert.ok(!line.includes(key), `key in log line: ${line}`);
      assert.ok(!line.includes(token), `token in log line: ${line}`);
      assert.ok(!line.includes(key.slice(-43)), 'not even the secret part');
    }
    const access = api.logs.filter((line) => line.includes('"msg":"request"'));
    assert.ok(access.some((line) => line.includes('apikey=[REDACTED]')));
    assert.ok(access.some((line) => line.includes('transactionToken=[REDACTED]')));
  });

  it('/ready is 503 NOT_READY when the stores are unreachable; /health still answers', async () => {
    await api.services.close();
    const response = await api.get('/ready');
    const body = await errorBody(response);
    assert.equal(response.status, 503);
    assert.equal(body.code, 'NOT_READY');
    assert.equal(
      (body as unknown as { engines: { database: string } }).engines.database,
      'down',
      'it says which engine',
    );
    assert.ok(response.headers.get('retry-after'));
    assert.equal((await api.get('/health')).status, 200);
  });
});
