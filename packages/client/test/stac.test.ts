import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { NadirClient } from '../src/client.js';
import { NadirApiError, NadirProtocolError, NadirUsageError } from '../src/errors.js';
import { fakeFetch, fakeTime, json } from './fake-fetch.js';

function client(fetch: typeof globalThis.fetch, extra: Partial<ConstructorParameters<typeof NadirClient>[0]> = {}) {
  const time = fakeTime();
  return new NadirClient({
    baseUrl: 'http://nadir.test/',
    apiKey: 'key-1',
    fetch,
    clock: time.clock,
    sleep: time.sleep,
    ...extra,
  });
}

const item = (id: string) => ({
  type: 'Feature',
  id,
  properties: { datetime: '2025-01-01T00:00:00Z' },
  assets: {},
  links: [],
});

/** A search over `ids`, paged by limit/offset, with the next link as the server writes it (the key repeated). */
function searchServer(ids: string[], origin = 'http://nadir.test') {
  return fakeFetch((url) => {
    const limit = Number(url.searchParams.get('limit') ?? 10);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const next = new URL(url);
    next.protocol = new URL(origin).protocol;
    next.host = new URL(origin).host;
    next.searchParams.set('offset', String(offset + limit));
    const links = offset + limit < ids.length ? [{ rel: 'next', href: next.href, method: 'GET' }] : [];
    return json(200, {
      type: 'FeatureCollection',
      features: ids.slice(offset, offset + limit).map(item),
      links,
      numberMatched: ids.length,
      numberReturned: Math.min(limit, ids.length - offset),
    });
  });
}

describe('STAC', () => {
  test('stacSearch follows next links to the last page, with the query and the key as the client sends them', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const server = searchServer(ids);
    const found: string[] = [];
    const nadir = client(server.fetch);
    for await (const found1 of nadir.stacSearch({
      bbox: [-85.43, 29.93, -85.4, 29.96],
      datetime: '2025-01-01T00:00:00Z/..',
      limit: 2,
    }))
      found.push(found1.id);
    assert.deepEqual(found, ids);
    assert.deepEqual(
      server.calls.map((c) => c.url.searchParams.get('offset')),
      [null, '2', '4'],
    );
    for (const call of server.calls) {
      assert.equal(call.url.pathname, '/stac/v1/search');
      assert.equal(call.url.searchParams.get('bbox'), '-85.43,29.93,-85.4,29.96');
      assert.equal(call.url.searchParams.get('datetime'), '2025-01-01T00:00:00Z/..');
      assert.deepEqual(call.url.searchParams.getAll('apikey'), ['key-1'], 'the key once, not repeated from the link');
    }
  });

  test('with the key in the header, no URL carries it, the links included', async () => {
    const server = searchServer(['a', 'b', 'c']);
    const nadir = client(server.fetch, { sendKeyIn: 'header' });
    const ids = [];
    for await (const found of nadir.stacItems({ limit: 1 })) ids.push(found.id);
    assert.deepEqual(ids, ['a', 'b', 'c']);
    assert.equal(server.calls[0]?.url.pathname, '/stac/v1/collections/surveys/items');
    for (const call of server.calls) {
      assert.equal(call.url.searchParams.has('apikey'), false);
      assert.equal(call.headers.authorization, 'Apikey key-1');
    }
  });

  test('a next link to another origin is not followed with the key', async () => {
    const server = searchServer(['a', 'b'], 'http://elsewhere.test');
    const nadir = client(server.fetch);
    const ids: string[] = [];
    await assert.rejects(async () => {
      for await (const found of nadir.stacSearch({ limit: 1 })) ids.push(found.id);
    }, NadirUsageError);
    assert.deepEqual(ids, ['a']);
    assert.equal(server.calls.length, 1);
  });

  test('a next link repeating itself ends the walk with an error instead of looping', async () => {
    const server = fakeFetch(() =>
      json(200, {
        type: 'FeatureCollection',
        features: [item('a')],
        links: [{ rel: 'next', href: 'http://nadir.test/stac/v1/search?offset=1' }],
      }),
    );
    const nadir = client(server.fetch);
    await assert.rejects(async () => {
      for await (const _ of nadir.stacSearch({})) void _;
    }, /repeats/);
    assert.equal(server.calls.length, 2);
  });

  test('STAC errors ({error, code, description}) become NadirApiError with the code and parameter', async () => {
    const message = 'bbox must be 4 numbers';
    const server = fakeFetch(() =>
      json(400, { error: message, code: 'INVALID_PARAMETER', description: message, parameter: 'bbox' }),
    );
    const nadir = client(server.fetch);
    const error = await nadir.stacLanding().catch((e: unknown) => e);
    assert.ok(error instanceof NadirApiError);
    assert.equal(error.code, 'INVALID_PARAMETER');
    assert.equal(error.parameter, 'bbox');
    assert.equal(error.message, message);
    assert.equal(server.calls.length, 1, 'a 400 is not retried');
  });

  test('search options are checked before anything is sent', async () => {
    const server = fakeFetch(() => json(200, {}));
    const nadir = client(server.fetch);
    const wrong = [
      { bbox: [1, 2, 3] as unknown as [number, number, number, number] },
      { bbox: [10, 0, -10, 1] as [number, number, number, number] },
      { bbox: [0, 0, 1, 1] as [number, number, number, number], intersects: { type: 'Point', coordinates: [0, 0] } },
      { datetime: 'yesterday' },
      { limit: 0 },
      { ids: ['a b'] },
    ];
    for (const options of wrong) {
      await assert.rejects(
        async () => {
          for await (const _ of nadir.stacSearch(options)) void _;
        },
        NadirUsageError,
        JSON.stringify(options),
      );
    }
    assert.equal(server.calls.length, 0);
  });

  test('landing, conformance, collections and an item are GETs of their paths with the key', async () => {
    const server = fakeFetch((url) => json(200, { path: url.pathname }));
    const nadir = client(server.fetch);
    await nadir.stacLanding();
    await nadir.stacConformance();
    await nadir.stacCollections();
    await nadir.stacCollection();
    await nadir.stacItem('survey-1');
    assert.deepEqual(
      server.calls.map((c) => c.url.pathname),
      [
        '/stac/v1/',
        '/stac/v1/conformance',
        '/stac/v1/collections',
        '/stac/v1/collections/surveys',
        '/stac/v1/collections/surveys/items/survey-1',
      ],
    );
    assert.ok(server.calls.every((c) => c.url.searchParams.get('apikey') === 'key-1'));
  });

  test('a server whose next links never end is followed up to maxPages, then a NadirProtocolError', async () => {
    const endless = fakeFetch((url, n) =>
      json(200, {
        type: 'FeatureCollection',
        features: [item(`i${n}`)],
        links: [{ rel: 'next', href: `http://nadir.test/stac/v1/search?page=${n + 1}${url.search ? '' : ''}` }],
      }),
    );
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const found of client(endless.fetch).stacSearch({ maxPages: 5 })) seen.push(found.id);
      })(),
      (error: Error) => error instanceof NadirProtocolError && /stopped after 5 pages/.test(error.message),
    );
    assert.deepEqual(seen, ['i1', 'i2', 'i3', 'i4', 'i5']);
    assert.equal(endless.calls.length, 5);
    // The default cap is there without asking for it.
    const cap = fakeFetch((_, n) =>
      json(200, { features: [item(`j${n}`)], links: [{ rel: 'next', href: `http://nadir.test/p${n + 1}` }] }),
    );
    await assert.rejects(
      (async () => {
        for await (const _ of client(cap.fetch).stacSearch()) void _;
      })(),
      /stopped after 1000 pages/,
    );
    assert.equal(cap.calls.length, 1000);
    await assert.rejects(client(endless.fetch).stacSearch({ maxPages: 0 }).next(), NadirUsageError);
  });

  test("a walk of 300 pages over real HTTP leaves no listener on the caller's signal, and its abort still stops it", async () => {
    // Node's own fetch, not a fake: it is what hung a listener on the signal per request.
    const server = createServer((request, response) => {
      const page = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      response.setHeader('content-type', 'application/geo+json');
      response.end(
        JSON.stringify({
          type: 'FeatureCollection',
          features: [item(`p${page}`)],
          links: [{ rel: 'next', href: `http://127.0.0.1:${port}/stac/v1/search?page=${page + 1}` }],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const real = new NadirClient({ baseUrl: `http://127.0.0.1:${port}/`, apiKey: 'key-1' });
      const controller = new AbortController();
      let seen = 0;
      await assert.rejects(
        (async () => {
          for await (const _ of real.stacSearch({ maxPages: 300, signal: controller.signal })) seen++;
        })(),
        /stopped after 300 pages/,
      );
      assert.equal(seen, 300);
      assert.equal(getEventListeners(controller.signal, 'abort').length, 0, 'no listener left on the signal');
      // The caller's abort still reaches a request in flight.
      const stopping = new AbortController();
      let pages = 0;
      await assert.rejects(
        (async () => {
          for await (const _ of real.stacSearch({ signal: stopping.signal })) if (++pages === 3) stopping.abort();
        })(),
        (error: Error) => error.name === 'AbortError',
      );
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        warnings.filter((name) => name === 'MaxListenersExceededWarning'),
        [],
      );
    } finally {
      process.off('warning', onWarning);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('a malformed page is a NadirProtocolError that says what is wrong, not a TypeError', async () => {
    for (const [body, what] of [
      [{ features: [], links: {} }, /"links" is not a list/],
      [{ features: {} }, /"features" is not a list/],
      [[], /not a JSON object/],
      [{ features: [item('a')], links: [{ rel: 'next' }] }, /lacks "rel" or "href"/],
    ] as const) {
      const server = fakeFetch(() => json(200, body));
      await assert.rejects(
        client(server.fetch).stacSearch().next(),
        (error: Error) => error instanceof NadirProtocolError && what.test(error.message),
        JSON.stringify(body),
      );
    }
  });
});
