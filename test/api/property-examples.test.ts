/**
 * Counterexamples the API's property-based tests (properties.test.ts) found, shrunk and kept as
 * example-based tests: each failed before the fix named beside it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { STATUS_BY_CODE } from '../../src/api/error-table.js';
import { type ApiFixture, createKey, errorBody, startApi } from './helpers.js';

/** The error contract: JSON `{error, code}` with the status the error table gives the code. */
async function refusal(response: Response): Promise<{ status: number; code: string }> {
  const body = await errorBody(response);
  assert.equal(response.status, STATUS_BY_CODE[body.code as keyof typeof STATUS_BY_CODE], JSON.stringify(body));
  return { status: response.status, code: body.code };
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
