import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ApiFixture, createKey, makeSurvey, startApi } from './helpers.js';

/**
 * The coverage lane (coverage-lane.ts) answers as the route does. The same request with its
 * point's comma percent-encoded (`%2C`, which the lane leaves to fastify to decode) goes through
 * fastify: both answers must be alike but for the token and the lane's Server-Timing entry.
 */

const AROUND: [number, number, number, number] = [9.99, 49.99, 10.01, 50.01];

describe('coverage lane', () => {
  let api: ApiFixture;
  let key: string;
  let other: { key: string; accountId: string };

  before(async () => {
    api = await startApi();
    key = (await createKey(api.services, 'acme')).key;
    const second = await createKey(api.services, 'globex');
    other = { key: second.key, accountId: second.account.id };
    await api.services.catalogue.put(
      makeSurvey({ id: 'a', captureDate: '2024-06-01', box: AROUND, tags: ['disaster:"storm"'] }),
    );
    await api.services.catalogue.put(makeSurvey({ id: 'b', captureDate: '2023-01-01', box: AROUND, types: ['Vert'] }));
  });
  after(() => api.close());

  async function both(query: string, init?: RequestInit) {
    const path = `/staticmap/v2/coverage.json?${query}`;
    const lane = await api.get(path.replace('%2C', ','), init);
    const route = await api.get(path, init);
    return { lane, route };
  }

  const timingNames = (response: Response) =>
    (response.headers.get('server-timing') ?? '').split(', ').map((entry) => entry.split(';')[0]);

  it('gives the route answer, headers and body, for requests it takes', async () => {
    const queries = [
      `apikey=${key}&point=10%2C50&radius=50&resources=TrueOrtho,DetailDsm`,
      `apikey=${key}&point=10%2C50&radius=5e1&resources=Vert,TrueOrtho&filter=anyTypes&fields=tags,pixelSizes`,
      `apikey=${key}&point=10.0%2C50&radius=100&resources=Vert&overlap=full&since=2020-01-01&until=24M&limit=1&offset=1`,
      `point=10%2C50&radius=50&resources=Vert&unknown=1&unknown=2`,
    ];
    for (const query of queries) {
      const init = query.startsWith('apikey') ? undefined : { headers: { authorization: `Apikey ${key}` } };
      const { lane, route } = await both(query, init);
      assert.equal(lane.status, 200, query);
      assert.equal(route.status, 200, query);
      assert.deepEqual(timingNames(lane), ['auth', 'catalogue', 'lane', 'total'], query);
      assert.deepEqual(timingNames(route), ['auth', 'catalogue', 'total'], query);
      const names = (response: Response) => [...response.headers.keys()].filter((name) => name !== 'date');
      assert.deepEqual(names(lane), names(route), query);
      for (const name of names(route)) {
        if (['server-timing', 'x-request-id', 'content-length'].includes(name)) continue;
        assert.equal(lane.headers.get(name), route.headers.get(name), `${name} of ${query}`);
      }
      const laneBody = await lane.text();
      const routeBody = await route.text();
      const token = /"transactionToken":"[^"]+"/;
      assert.equal(laneBody.replace(token, ''), routeBody.replace(token, ''), query);
      assert.equal(Buffer.byteLength(laneBody), Number(lane.headers.get('content-length')));
    }
  });

  it('keeps the caller’s request id, and leaves refusals to fastify', async () => {
    const kept = await api.get(`/staticmap/v2/coverage.json?apikey=${key}&point=10,50&radius=50&resources=Vert`, {
      headers: { 'x-request-id': 'abc-123' },
    });
    assert.equal(kept.headers.get('x-request-id'), 'abc-123');
    assert.ok(timingNames(kept).includes('lane'));
    const refused: [string, number][] = [
      [`point=10,50&radius=50&resources=Vert`, 401],
      [`apikey=nadir_000000000000_x&point=10,50&radius=50&resources=Vert`, 401],
      [`apikey=${key}&point=10,50&radius=50&radius=60&resources=Vert`, 400],
      [`apikey=${key}&point=10,50&radius=500&resources=Vert`, 400],
      [`apikey=${key}&point=10,50&radius=50&resources=Vert&limit=1.5`, 400],
      [`apikey=${key}&point=10,50&radius=50&resources=Vert&filter=some`, 400],
      [`apikey=${key}&point=10;50&radius=50&resources=Vert`, 400],
      [`apikey=${key}&point=10,50&radius=50&resources=Nope`, 400],
      [`apikey=${key}&point=10,50&radius=50&resources=Vert&since=2030-01-01&until=2020-01-01`, 400],
    ];
    for (const [query, status] of refused) {
      const response = await api.get(`/staticmap/v2/coverage.json?${query}`);
      assert.equal(response.status, status, query);
      assert.ok(!timingNames(response).includes('lane'), query);
    }
    const head = await api.get(`/staticmap/v2/coverage.json?apikey=${key}&point=10,50&radius=50&resources=Vert`, {
      method: 'HEAD',
    });
    assert.equal(head.status, 200);
    assert.ok(!timingNames(head).includes('lane'));
  });

  it('issues every request its own token, for its own account, from a remembered page', async () => {
    const path = '/staticmap/v2/coverage.json?point=10,50&radius=50&resources=Vert';
    const tokens: string[] = [];
    for (const apikey of [key, key, other.key, other.key]) {
      const body = (await (await api.get(`${path}&apikey=${apikey}`)).json()) as { transactionToken: string };
      tokens.push(body.transactionToken);
    }
    assert.equal(new Set(tokens).size, 4);
    const accounts = tokens.map((token) => api.services.tokens.decode(token).accountId);
    assert.equal(accounts[2], other.accountId);
    assert.equal(accounts[3], other.accountId);
    assert.notEqual(accounts[0], other.accountId);
    assert.equal(accounts[0], accounts[1]);
  });

  it('shows a survey put after an answer was remembered', async () => {
    const path = `/staticmap/v2/coverage.json?apikey=${key}&point=10,50&radius=50&resources=Vert`;
    const before = (await (await api.get(path)).json()) as { total: number };
    await api.services.catalogue.put(makeSurvey({ id: 'c', captureDate: '2025-01-01', box: AROUND }));
    const afterPut = (await (await api.get(path)).json()) as { total: number; surveys: { id: string }[] };
    assert.equal(afterPut.total, before.total + 1);
    assert.equal(afterPut.surveys[0]?.id, 'c');
    await api.services.catalogue.delete('c');
    assert.equal(((await (await api.get(path)).json()) as { total: number }).total, before.total);
  });
});
