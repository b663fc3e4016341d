/**
 * No API key or transaction token, nor a 12-character piece of one, however encoded, reaches a log
 * line or an echoed response header (issue 18, item 6): a real server with its log captured gets
 * a real key and a real token in every position we could think of, and every log line and every
 * response header is searched for every 12-character piece of both, also percent-decoded and
 * base64-decoded (test/support/secret-pieces.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SecretPieces } from '../support/secret-pieces.js';
import { processWatch, SecretWatch } from '../support/secret-watch.js';
import { type ApiFixture, createKey, startApi } from './helpers.js';
import { exchange, request as rawRequest } from './raw-http.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SURVEY = '6f1c2a9e-3b7d-4e51-9a0c-2d4e8b1f7a01';
const POINT = 'point=10,50&radius=50';

function percentEncodeAll(text: string, lower = false): string {
  const encoded = [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
  return lower ? encoded : encoded.toUpperCase();
}

/** A secret in the forms a client (or an attacker probing the logs) might send it in. */
function variants(secret: string, parts: Record<string, string>): Record<string, string> {
  const underscores = secret.replace(/_/g, '%5F').replace(/\./g, '%2E');
  return {
    whole: secret,
    'minus its last character': secret.slice(0, -1),
    'with a character more': `${secret}Q`,
    ...parts,
    'middle 20 characters': secret.slice(20, 40),
    'underscores and dots percent-encoded': underscores,
    'underscores and dots percent-encoded, lower case': underscores.replace(/%5F/g, '%5f').replace(/%2E/g, '%2e'),
    'double percent-encoded': encodeURIComponent(underscores),
    'every byte percent-encoded': percentEncodeAll(secret),
    'every byte percent-encoded, lower case': percentEncodeAll(secret, true),
    base64: Buffer.from(secret).toString('base64'),
    base64url: Buffer.from(secret).toString('base64url'),
    'base64 of a piece': Buffer.from(secret.slice(7, 40)).toString('base64'),
    'minus its last character, base64': Buffer.from(secret.slice(0, -1)).toString('base64'),
  };
}

/** Unknown names, and known names spelled or encoded differently, that a secret might come under. */
const OTHER_NAMES = [
  'foo',
  'key',
  'token',
  'APIKEY',
  'apiKey',
  'api_key',
  'api%5Fkey',
  'api%5fkey',
  '%61pikey',
  'transactiontoken',
  'transaction%54oken',
  'transaction_token',
  'access_token',
  'x',
];
/** Names the routes declare, under which a secret is a bad value (a 400) or a second value. */
const DECLARED_NAMES = [
  'apikey',
  'transactionToken',
  'point',
  'radius',
  'size',
  'resources',
  'since',
  'until',
  'include',
  'exclude',
  'fields',
  'limit',
  'offset',
  'mosaic',
  'filter',
  'overlap',
];

/** Header values must be visible ASCII: percent-encoding and base64 are, raw keys and tokens are. */
function headerSafe(value: string): boolean {
  return /^[\x21-\x7e]+$/.test(value);
}

describe('secrets never reach the log or an echoed header', () => {
  let api: ApiFixture;
  let key: string;
  let token: string;
  const pieces = new SecretPieces();
  const responses: { what: string; status: number; headers: string[] }[] = [];

  before(async () => {
    api = await startApi();
    key = (await createKey(api.services, 'secrets')).key;
    const coverage = await api.get(`/staticmap/v2/coverage.json?apikey=${key}&${POINT}&resources=Vert`);
    assert.equal(coverage.status, 200);
    token = ((await coverage.json()) as { transactionToken: string }).transactionToken;
    pieces.add(key, 'key');
    pieces.add(token, 'token');
  });
  after(() => api.close());

  async function send(what: string, path: string, init: RequestInit = {}): Promise<Response> {
    const response = await api.get(path, init);
    await response.arrayBuffer();
    responses.push({
      what,
      status: response.status,
      headers: [...response.headers].map(([name, value]) => `${name}: ${value}`),
    });
    return response;
  }

  async function all(requests: [string, string, RequestInit?][]): Promise<void> {
    // A few at a time: quick, without flooding the 2-core machine the suite shares.
    for (let i = 0; i < requests.length; i += 8) {
      await Promise.all(requests.slice(i, i + 8).map(([what, path, init]) => send(what, path, init)));
    }
  }

  function routes(): Record<string, string> {
    return {
      coverage: `/staticmap/v2/coverage.json?apikey=${key}&${POINT}&resources=Vert`,
      imagery: `/staticmap/v2/surveys/${SURVEY}/TrueOrtho.png?transactionToken=${token}&${POINT}&size=100x100`,
      'tile lane': `/tiles/v3/Vert/19/1/1.jpg?apikey=${key}`,
      'survey tile': `/tiles/v3/surveys/${SURVEY}/Vert/19/1/1.png?apikey=${key}`,
      health: '/health?',
      'no such route': '/nowhere?',
    };
  }

  test('a battery of requests carrying the key and the token everywhere', async () => {
    const secrets = {
      key: variants(key, { 'secret part alone': key.slice(19), 'without nadir_': key.slice(6) }),
      token: variants(token, { 'body alone': token.split('.')[2] ?? '', 'without t1.': token.slice(3) }),
    };
    const requests: [string, string, RequestInit?][] = [];
    for (const [secretName, forms] of Object.entries(secrets)) {
      for (const [form, value] of Object.entries(forms)) {
        const label = `${secretName} ${form}`;
        const plainNames = OTHER_NAMES.filter((name) => !name.includes('%'));
        for (const [route, url] of Object.entries(routes())) {
          const join = url.endsWith('?') ? '' : '&';
          // Under every other name at once; plain names alone too (the tile lane takes those).
          requests.push([
            `${label} under other names, ${route}`,
            `${url}${join}${OTHER_NAMES.map((n) => `${n}=${value}`).join('&')}`,
          ]);
          requests.push([
            `${label} under plain other names, ${route}`,
            `${url}${join}${plainNames.map((n) => `${n}=${value}`).join('&')}`,
          ]);
          // As a parameter name, with and without a value, and as a bare value.
          requests.push([`${label} as a name, ${route}`, `${url}${join}${value}=1&${value}&=${value}`]);
        }
        // In the path: a segment of a route, an unknown route, a tile file name.
        requests.push([`${label} as the path`, `/${value}`]);
        requests.push([`${label} under the path`, `/staticmap/v2/${value}/coverage.json?apikey=${key}`]);
        requests.push([
          `${label} as a survey id`,
          `/staticmap/v2/surveys/${value}/TrueOrtho.png?transactionToken=${token}&${POINT}&size=9x9`,
        ]);
        requests.push([`${label} as a tile survey id`, `/tiles/v3/surveys/${value}/Vert/19/1/1.jpg?apikey=${key}`]);
        requests.push([`${label} as a tile type`, `/tiles/v3/${value}/19/1/1.jpg?apikey=${key}`]);
        requests.push([`${label} as a tile file`, `/tiles/v3/Vert/19/1/${value}.jpg?apikey=${key}`]);
        requests.push([
          `${label} as an imagery file`,
          `/staticmap/v2/surveys/${SURVEY}/${value}?transactionToken=${token}&${POINT}`,
        ]);
        requests.push([`${label} under docs`, `/docs/static/${value}`]);
        if (headerSafe(value)) {
          const headers = {
            'x-request-id': value,
            authorization: `Apikey ${value}`,
            referer: `https://example.com/map?apikey=${value}`,
            cookie: `session=${value}; apikey=${value}`,
            'user-agent': `client/1.0 (${value})`,
            'x-api-key': value,
            'x-forwarded-for': value,
            'if-none-match': `"${value}"`,
          };
          for (const [route, url] of Object.entries(routes())) {
            requests.push([`${label} in headers, ${route}`, url, { headers }]);
          }
          requests.push([
            `${label} as Authorization alone`,
            `/staticmap/v2/coverage.json?${POINT}&resources=Vert`,
            { headers: { authorization: `Apikey ${value}` } },
          ]);
          requests.push([
            `${label} as a Bearer token`,
            `/tiles/v3/Vert/19/1/1.jpg`,
            { headers: { authorization: `Bearer ${value}` } },
          ]);
          requests.push([
            `${label} as Basic credentials`,
            '/health',
            { headers: { authorization: `Basic ${Buffer.from(`${value}:`).toString('base64')}` } },
          ]);
        }
      }
      // Under each declared name: a bad value (400), or a second value (400), on each route.
      for (const value of [
        forms.whole,
        forms['minus its last character'],
        forms['underscores and dots percent-encoded'],
      ] as string[]) {
        for (const name of DECLARED_NAMES) {
          for (const [route, url] of Object.entries(routes())) {
            const join = url.endsWith('?') ? '' : '&';
            requests.push([`${secretName} as ${name}, ${route}`, `${url}${join}${name}=${value}`]);
          }
          requests.push([
            `${secretName} as the only ${name}, coverage`,
            `/staticmap/v2/coverage.json?${name}=${value}`,
          ]);
        }
      }
    }
    // The error paths with a secret in the request: wrong key (401), wrong token (403), a
    // malformed URL, other methods, a body.
    requests.push([
      'a key one character short',
      `/staticmap/v2/coverage.json?apikey=${key.slice(0, -1)}&${POINT}&resources=Vert`,
    ]);
    requests.push([
      'a token one character short',
      `/staticmap/v2/surveys/${SURVEY}/Vert.jpg?transactionToken=${token.slice(0, -1)}&${POINT}&size=9x9`,
    ]);
    requests.push([
      'a token for another point',
      `/staticmap/v2/surveys/${SURVEY}/Vert.jpg?transactionToken=${token}&point=11,50&radius=50&size=9x9`,
    ]);
    requests.push(['a malformed URL', `/%zz/${key}/${token}?apikey=${key}`]);
    requests.push([
      'a malformed query',
      `/staticmap/v2/coverage.json?apikey=${key}&%zz=${token}&${POINT}&resources=Vert`,
    ]);
    requests.push([
      'POST with a body',
      `/staticmap/v2/coverage.json?apikey=${key}`,
      { method: 'POST', body: `apikey=${key}&t=${token}` },
    ]);
    requests.push(['PUT on a tile', `/tiles/v3/Vert/19/1/1.jpg?apikey=${key}`, { method: 'PUT', body: token }]);
    requests.push(['DELETE', `/${key}?t=${token}`, { method: 'DELETE' }]);
    requests.push([
      'OPTIONS',
      `/staticmap/v2/coverage.json?apikey=${key}`,
      { method: 'OPTIONS', headers: { 'access-control-request-headers': key.toLowerCase() } },
    ]);
    requests.push([
      'HEAD on a tile',
      `/tiles/v3/Vert/19/1/1.jpg?apikey=${key}`,
      { method: 'HEAD', headers: { 'x-request-id': key } },
    ]);
    requests.push([
      'a huge query',
      `/staticmap/v2/coverage.json?apikey=${key}&${POINT}&resources=Vert&pad=${'p'.repeat(9000)}&foo=${token}`,
    ]);
    await all(requests);

    // Requests node:http itself refuses (the client error handler answers them).
    const port = new URL(api.baseUrl).port;
    for (const head of [
      `GET /?apikey=${key} HTTP/1.1\r\nX-Request-Id: ${key}\r\n\r\n`,
      `GET /${token} HTTP/1.1 extra\r\nHost: x\r\n\r\n`,
      rawRequest(`/staticmap/v2/coverage.json?apikey=${key}`, [`X-Big: ${token.repeat(600)}`]),
      rawRequest(`/tiles/v3/Vert/19/1/1.jpg?apikey=${key}`, [`X-Request-Id: ${token}`, 'Content-Length: -1']),
      rawRequest(`/tiles/v3/Vert/19/1/1.jpg?apikey=${key}`, [`X-Request-Id: ${key}`, `X-Request-Id: ${token}`]),
    ]) {
      const answered = await exchange(Number(port), [head], [false], { timeoutMs: 5_000 });
      answered.socket.destroy();
      for (const response of answered.responses) {
        responses.push({
          what: `raw ${head.slice(0, 40)}`,
          status: response.status,
          headers: Object.entries(response.headers).map(([name, value]) => `${name}: ${value}`),
        });
      }
    }

    const leaks: string[] = [];
    for (const response of responses) {
      for (const header of response.headers) {
        const found = pieces.findIn(header);
        if (found.length > 0)
          leaks.push(
            `header of "${response.what}" (${response.status}): ${found.join(', ')} in ${header.slice(0, 200)}`,
          );
      }
    }
    for (const line of api.logs) {
      const found = pieces.findIn(line);
      if (found.length > 0) leaks.push(`log: ${found.join(', ')} in ${line.slice(0, 300)}`);
    }
    assert.ok(responses.length > 500, `${responses.length} responses`);
    // Every answer but the few node:http or fastify's router refuse before any hook runs.
    assert.ok(api.logs.length >= responses.length * 0.9, `${api.logs.length} log lines`);
    assert.ok(
      responses.some((r) => r.status === 200) && responses.some((r) => r.status === 400),
      'successes and failures',
    );
    assert.deepEqual(leaks.slice(0, 30), [], `${leaks.length} leaks`);
  });

  test('the access log keeps what is safe: the path, known parameters that parsed, short names', async () => {
    const before = api.logs.length;
    await send(
      'readable',
      `/staticmap/v2/coverage.json?apikey=${key}&${POINT}&resources=Vert,TrueOrtho&since=2020-01-01&cb=12345&foo=${key}&limit=abc`,
    );
    const line = api.logs.slice(before).find((l) => l.includes('"msg":"request"')) ?? '';
    const url = (JSON.parse(line) as { url: string }).url;
    assert.equal(
      url,
      '/staticmap/v2/coverage.json?apikey=[REDACTED]&point=10,50&radius=50&resources=Vert,TrueOrtho&since=2020-01-01&cb=[REDACTED]&foo=[REDACTED]&limit=[REDACTED]',
    );
    const tile = api.logs.length;
    await send(
      'tile',
      `/tiles/v3/surveys/${SURVEY}/Vert/19/1/1.jpg?apikey=${key}&since=2020-01-01&include=disaster:flood`,
    );
    const tileLine = api.logs.slice(tile).find((l) => l.includes('"msg":"request"')) ?? '';
    assert.equal(
      (JSON.parse(tileLine) as { url: string }).url,
      `/tiles/v3/surveys/${SURVEY}/Vert/19/1/1.jpg?apikey=[REDACTED]&since=2020-01-01&include=disaster:flood`,
    );
  });

  test('X-Request-Id: UUIDs, hex trace ids and short ids are kept; anything that could hold a secret is replaced', async () => {
    for (const kept of [
      '4bf92f35-77b3-4da6-a3ce-929d0e0e4736',
      '4BF92F3577B34DA6A3CE929D0E0E4736',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      'abc.123:x-y',
    ]) {
      const response = await send('kept id', '/health', { headers: { 'x-request-id': kept } });
      assert.equal(response.headers.get('x-request-id'), kept);
    }
    for (const replaced of [
      key,
      token,
      key.slice(19),
      token.split('.')[2] as string,
      'trace-4bf92f3577b34da6.a3ce929d',
      'abcdefghijkl',
      `${'a'.repeat(65)}`,
      '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    ]) {
      for (const path of ['/health', `/tiles/v3/Vert/19/1/1.jpg?apikey=${key}`, '/nowhere']) {
        const response = await send('replaced id', path, { headers: { 'x-request-id': replaced } });
        assert.match(response.headers.get('x-request-id') ?? '', UUID, `${replaced} on ${path}`);
      }
    }
  });

  test('the suite-wide watch sees the lines and secrets of this file, and finds pieces and shapes', () => {
    // startApi's log and services are watched: every line above, the key and the token.
    const watched = processWatch.counts;
    assert.ok(watched.lines >= api.logs.length, `${watched.lines} lines watched`);
    assert.ok(watched.pieces >= key.length - 11 + token.length - 11, `${watched.pieces} pieces`);
    const watch = new SecretWatch();
    watch.noteSecret(key);
    watch.noteSecret(token);
    watch.watchLine(`{"msg":"request","url":"/x?foo=${key.slice(20, 32)}"}`, 'a piece of the key');
    watch.watchLine(
      `{"msg":"x","err":"${Buffer.from(token.slice(40, 60)).toString('base64')}"}`,
      'base64 of the token',
    );
    watch.watchLine('{"msg":"request","url":"/x?apikey=[REDACTED]"}', 'clean');
    assert.deepEqual(
      watch.leaks().map((leak) => leak.split(':')[0]),
      ['a piece of the key', 'base64 of the token'],
    );
    const shapes = new SecretWatch();
    shapes.watchLine(`nadir_0123456789ab_${'Ab1'.repeat(5)}`, 'a key nobody noted');
    shapes.watchLine(`t1.k9.${'Ab1_'.repeat(8)}`, 'a token nobody noted');
    assert.equal(shapes.leaks().length, 2);
  });
});
