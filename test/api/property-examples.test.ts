/**
 * Counterexamples the API's property-based tests (properties.test.ts) found, shrunk and kept as
 * example-based tests: each failed before the fix named beside it.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { STATUS_BY_CODE } from '../../src/api/http/error-table.js';
import { type ApiFixture, createKey, errorBody, startApi } from './helpers.js';

/** The error contract: JSON `{error, code}` with the status the error table gives the code. */
async function refusal(response: Response): Promise<{ status: number; code: string }> {
  const body = await errorBody(response);
  assert.equal(response.status, STATUS_BY_CODE[body.code as keyof typeof STATUS_BY_CODE], JSON.stringify(body));
  return { status: response.status, code: body.code };
}

/** Sends raw bytes on a fresh connection and returns everything the server sends back. */
function rawExchange(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('API counterexamples found by the properties', () => {
  let api: ApiFixture;
  let key: string;

  before(async () => {
    api = await startApi();
    key = (await createKey(api.services, 'examples')).key;
  });
  after(() => api.close());

  it('a GET that the docs static route turns away is a 404, never a 405 "GET is not allowed"', async () => {
    for (const path of ['/docs/static/nothing', '/docs/static/..%2F..%2Fetc%2Fpasswd']) {
      for (const method of ['GET', 'HEAD']) {
        const response = await api.get(path, { method });
        assert.equal(response.status, 404, `${method} ${path}`);
        if (method === 'GET') assert.deepEqual(await refusal(response), { status: 404, code: 'NOT_FOUND' });
      }
    }
    assert.ok(key);
  });

  it("a path the docs' static files refuse is a 400 or 404 by the table, not a 403 BAD_REQUEST", async () => {
    for (const path of ['/docs/static/%00', '/docs/static/swagger-ui.css%00.html', `/docs/static/${'a'.repeat(300)}`]) {
      const { status } = await refusal(await api.get(path));
      assert.ok(status === 400 || status === 404, `${path}: ${status}`);
    }
  });

  it("a request head over node's size limit is a 431 with the code the error table gives 431", async () => {
    const response = await api.get(`/staticmap/v2/coverage.json?point=0,0&resources=${'%2541'.repeat(3300)}`);
    assert.deepEqual(await refusal(response), { status: 431, code: 'HEADERS_TOO_LARGE' });
  });

  it("a HEAD that node's parser refuses is answered without a body", async () => {
    const port = Number(new URL(api.baseUrl).port);
    for (const target of ['/staticmap/v2/surveys/x/DetailDsm.tif?_=\xef\xbf\xbd', `/health?x=${'A'.repeat(20_000)}`]) {
      for (const method of ['HEAD', 'GET']) {
        const request = Buffer.from(`${method} ${target} HTTP/1.1\r\nHost: x\r\n\r\n`, 'latin1');
        const answer = await rawExchange(port, request);
        const [head = '', body] = answer.split('\r\n\r\n');
        assert.match(head, /^HTTP\/1\.1 4\d\d /, `${method}: ${answer.slice(0, 200)}`);
        assert.match(head, /content-type: application\/json/i);
        if (method === 'HEAD') assert.equal(body, '', `HEAD answered with a body: ${answer.slice(0, 300)}`);
        else assert.match(body ?? '', /"code":"(BAD_REQUEST|HEADERS_TOO_LARGE)"/);
      }
    }
  });

  it('date filters take every real date, 0001-01-01 to 9999-12-31 (the oldest age, 9999Y, gave 0001-01-01 already)', async () => {
    const coverage = `/staticmap/v2/coverage.json?apikey=${key}&point=10,45&radius=10&resources=Vert`;
    for (const filter of ['since=0001-01-01', 'until=1899-12-31', 'since=0004-02-29&until=9999-12-31', 'since=9999Y']) {
      const response = await api.get(`${coverage}&${filter}`);
      assert.equal(response.status, 200, `${filter}: ${await response.text()}`);
    }
    const tile = await api.get(`/tiles/v3/Vert/16/34587/23573.jpg?apikey=${key}&mosaic=latest&until=1899-12-31`);
    assert.deepEqual(await refusal(tile), { status: 404, code: 'NO_IMAGERY' });
    for (const filter of ['since=0000-01-01', 'since=1900-02-29', 'until=0100-02-29']) {
      assert.deepEqual(await refusal(await api.get(`${coverage}&${filter}`)), {
        status: 400,
        code: 'INVALID_PARAMETER',
      });
    }
  });

  it('a path parameter over its limit is refused naming it (the router said "URI Too Long" from 101 characters)', async () => {
    const token = 't1.k1.x';
    const imagery = await api.get(
      `/staticmap/v2/surveys/3f6c1d2e-8a4b-4c5d-9e6f-7a8b9c0d1e2f/${'A'.repeat(100)}.tif?size=1x1&transactionToken=${token}&point=10%2C45&radius=1`,
    );
    assert.deepEqual(await refusal(imagery), { status: 400, code: 'INVALID_PARAMETER' });
    const tile = await api.get(`/tiles/v3/surveys/${'s'.repeat(129)}/Vert/16/34587/23573.jpg?apikey=${key}`);
    const body = await errorBody(tile);
    assert.deepEqual([tile.status, body.code, body.parameter], [400, 'INVALID_PARAMETER', 'surveyId']);
    const long = await errorBody(await api.get(`/tiles/v3/surveys/${'s'.repeat(600)}/Vert/1/0/0.jpg?apikey=${key}`));
    assert.equal(long.code, 'BAD_REQUEST');
    assert.match(long.error, /path segment is longer than 512 characters/);
  });

  it('another method is a 405 (or 404, or a preflight 204) whatever body it carries', async () => {
    const tile = `/tiles/v3/surveys/3f6c1d2e-8a4b-4c5d-9e6f-7a8b9c0d1e2f/Vert/16/34587/23573.JPG?apikey=${key}`;
    const bodies: Array<[string, string]> = [
      ['application/json', ''],
      ['application/json', '{bad'],
      ['application/json', 'x'.repeat(5000)],
      ['text/plain', 'b'.repeat(2000)],
      ['foo/bar', 'x'],
    ];
    for (const [type, body] of bodies) {
      const init = { headers: { 'content-type': type }, body };
      for (const [method, path, expected] of [
        ['POST', tile, 'METHOD_NOT_ALLOWED'],
        ['PUT', '/health', 'METHOD_NOT_ALLOWED'],
        ['DELETE', '/staticmap/v2/coverage.json', 'METHOD_NOT_ALLOWED'],
        ['POST', '/nowhere', 'NOT_FOUND'],
      ] as const) {
        const response = await api.get(path, { method, ...init });
        assert.deepEqual(
          await refusal(response),
          { status: STATUS_BY_CODE[expected], code: expected },
          `${method} ${path} ${type} body[${body.length}]`,
        );
      }
      const preflight = await api.get('/health', { method: 'OPTIONS', ...init });
      assert.equal(preflight.status, 204, `OPTIONS ${type} body[${body.length}]`);
    }
  });
});
