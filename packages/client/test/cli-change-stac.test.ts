/** nadir-client change, download --types DsmChange and stac search against a scripted server. */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CliContext } from '../src/node/cli/context.js';
import { main } from '../src/node/cli/main.js';
import { apiError, coveragePage, fakeFetch, fakeTime, type Handler, json, type SurveyStub } from './fake-fetch.js';

const SURVEYS: SurveyStub[] = [
  { id: 'after', captureDate: '2025-10-20', pixelSizes: { DetailDsm: 0.3 } },
  { id: 'before', captureDate: '2025-04-02', pixelSizes: { DetailDsm: 0.25 } },
];
const FIGURES = {
  after: { id: 'after', captureDate: '2025-10-20' },
  baseline: { id: 'before', captureDate: '2025-04-02' },
  point: [-85.418, 29.945],
  radius: 12,
  size: 80,
  groundResolution: 0.3,
  threshold: 2,
  aoiArea: 576,
  comparedArea: 576,
  comparedShare: 1,
  loss: { area: 104.67, volume: 648.22 },
  gain: { area: 11.16, volume: 32.49 },
};

const server: Handler = (url) => {
  if (url.pathname === '/staticmap/v2/coverage.json') return coveragePage(url, SURVEYS, 'tok');
  if (url.pathname.endsWith('DsmChange.json')) return json(200, FIGURES);
  const body = `${url.pathname} ${url.searchParams.get('size')}`;
  return new Response(body, { headers: { 'content-length': String(body.length) } });
};

async function run(
  argv: string[],
  handler: Handler,
  env: Record<string, string> = { NADIR_URL: 'http://nadir.test', NADIR_API_KEY: 'k' },
) {
  const fake = fakeFetch(handler);
  let stdout = '';
  let stderr = '';
  const time = fakeTime();
  const context: CliContext = {
    env,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text), isTTY: false },
    clock: time.clock,
    sleep: time.sleep,
    fetch: fake.fetch,
    signal: new AbortController().signal,
  };
  return { code: await main(argv, context), stdout, stderr, calls: fake.calls };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nadir-client-change-'));
});
after(() => rm(dir, { recursive: true, force: true }));

const HOUSE = ['--point', '-85.418,29.945', '--radius', '12'];

describe('nadir-client change', () => {
  test('prints lost and gained area and volume of the newest survey against its baseline, at DetailDsm native size', async () => {
    const result = await run(['change', ...HOUSE, '--threshold', '1.5'], server);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^after {5}2025-10-20 {2}after$/m);
    assert.match(result.stdout, /^baseline {2}2025-04-02 {2}before$/m);
    assert.match(result.stdout, /^lost {6}104\.67 m² {2}648\.22 m³$/m);
    assert.match(result.stdout, /^gained {4}11\.16 m² {2}32\.49 m³$/m);
    const figures = result.calls.at(-1)?.url as URL;
    assert.equal(figures.pathname, '/staticmap/v2/surveys/after/DsmChange.json');
    assert.equal(figures.searchParams.get('size'), '80x80', '2 x 12 m / 0.3 m');
    assert.equal(figures.searchParams.get('threshold'), '1.5');
    assert.equal(figures.searchParams.has('baseline'), false, "the server's default baseline");
  });

  test('a second run for the same area reuses the stored token: one transaction, not one a run', async () => {
    const tokens = join(dir, 'state', 'tokens.json');
    let issued = 0;
    const issuing: Handler = (url) => {
      // Every coverage call hands out a new token, as the server does.
      if (url.pathname === '/staticmap/v2/coverage.json') return coveragePage(url, SURVEYS, `tok-${++issued}`);
      return server(url, 0);
    };
    const env = { NADIR_URL: 'http://nadir.test', NADIR_API_KEY: 'k', NADIR_TOKEN_FILE: tokens };
    const first = await run(['change', ...HOUSE], issuing, env);
    const second = await run(['change', ...HOUSE], issuing, env);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(second.code, 0, second.stderr);
    const used = [first, second].map((r) => r.calls.at(-1)?.url.searchParams.get('transactionToken'));
    assert.deepEqual(used, ['tok-1', 'tok-1']);
    // Without a home or NADIR_TOKEN_FILE nothing is kept, and each run is billed on its own.
    const bare = await run(['change', ...HOUSE], issuing);
    assert.equal(bare.calls.at(-1)?.url.searchParams.get('transactionToken'), `tok-${issued}`);
  });

  test('--json prints the figures; --after and --baseline are sent; mistakes exit 2, refusals 1 with the code', async () => {
    const result = await run(['change', ...HOUSE, '--after', 'after', '--baseline', 'before', '--json'], server);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), FIGURES);
    assert.equal(result.calls.at(-1)?.url.searchParams.get('baseline'), 'before');
    assert.equal((await run(['change', ...HOUSE, '--threshold', 'lots'], server)).code, 2);
    const unknown = await run(['change', ...HOUSE, '--after', 'nope'], server);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /survey nope has no DetailDsm/);
    const refused = await run(['change', ...HOUSE], (url) =>
      url.pathname.endsWith('.json') && !url.pathname.includes('coverage')
        ? apiError(404, 'NO_BASELINE')
        : coveragePage(url, SURVEYS, 'tok'),
    );
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /404 NO_BASELINE/);
  });
});

describe('nadir-client download --types DsmChange', () => {
  test('one change per survey with an older one, named after survey, baseline and type, on one token', async () => {
    const out = join(dir, 'change');
    const result = await run(['download', ...HOUSE, '--types', 'DsmChange,DetailDsm', '--out', out, '--json'], server);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual((await readdir(out)).filter((f) => !f.startsWith('.')).sort(), [
      '2025-04-02_before_DetailDsm_-85.418,29.945_12m_96px.tif',
      '2025-10-20_after_DetailDsm_-85.418,29.945_12m_80px.tif',
      '2025-10-20_after_DsmChange_2025-04-02_before_-85.418,29.945_12m_80px.tif',
    ]);
    const change = result.calls.find((c) => c.url.pathname.includes('DsmChange'))?.url as URL;
    assert.equal(change.searchParams.get('baseline'), 'before');
    assert.equal(change.searchParams.get('size'), '80x80');
    const coverage = result.calls.filter((c) => c.url.pathname.endsWith('coverage.json'));
    assert.equal(coverage.length, 1, 'one coverage call, so one token for all three');
    assert.equal(coverage[0]?.url.searchParams.get('resources'), 'DetailDsm');
    const report = JSON.parse(result.stdout) as { missing: { surveyId: string; type: string }[] };
    assert.deepEqual(report.missing, [{ surveyId: 'before', type: 'DsmChange' }]);
  });

  test('DsmChange with --split, or --baseline without DsmChange, is a mistake (exit 2)', async () => {
    const area = join(dir, 'area.geojson');
    await writeFile(
      area,
      JSON.stringify({
        type: 'MultiPoint',
        coordinates: [
          [-85.42, 29.944],
          [-85.416, 29.947],
        ],
      }),
    );
    const split = await run(['download', '--aoi', area, '--split', '--types', 'DsmChange', '--out', dir], server);
    assert.equal(split.code, 2);
    assert.match(split.stderr, /does not combine with --split/);
    const baseline = await run(['download', ...HOUSE, '--types', 'TrueOrtho', '--baseline', 'b', '--out', dir], server);
    assert.equal(baseline.code, 2);
    assert.equal(baseline.calls.length, 0);
  });
});

describe('nadir-client stac search', () => {
  const items = ['s3', 's2', 's1'].map((id, i) => ({
    type: 'Feature',
    id,
    properties: {
      datetime: null,
      'nadir:capture_date': `2025-0${3 - i}-01`,
      gsd: 0.075,
      'nadir:tags': ['disaster:hurricane'],
    },
    assets: { Vert: { href: 'x' }, Vert_tiles: { href: 'y' } },
    links: [],
  }));
  const stac: Handler = (url) => {
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const next = new URL(url);
    next.searchParams.set('offset', String(offset + 2));
    return json(200, {
      type: 'FeatureCollection',
      features: items.slice(offset, offset + 2),
      links: offset + 2 < items.length ? [{ rel: 'next', href: next.href }] : [],
    });
  };

  test('lists every item across pages, one line each', async () => {
    const result = await run(['stac', 'search', '--bbox', '-85.43,29.93,-85.40,29.96', '--limit', '2'], stac);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.stdout.trim().split('\n'), [
      '2025-03-01  s3  Vert  0.075 m  [disaster:hurricane]',
      '2025-02-01  s2  Vert  0.075 m  [disaster:hurricane]',
      '2025-01-01  s1  Vert  0.075 m  [disaster:hurricane]',
    ]);
    assert.equal(result.calls.length, 2);
    assert.equal(result.calls[0]?.url.searchParams.get('bbox'), '-85.43,29.93,-85.4,29.96');
  });

  test('--json is one FeatureCollection of every item; a bad datetime exits 2 before any request', async () => {
    const result = await run(
      ['stac', 'search', '--limit', '2', '--datetime', '2025-01-01T00:00:00Z/..', '--json'],
      stac,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      (JSON.parse(result.stdout) as { features: { id: string }[] }).features.map((f) => f.id),
      ['s3', 's2', 's1'],
    );
    const wrong = await run(['stac', 'search', '--datetime', 'yesterday'], stac);
    assert.equal(wrong.code, 2);
    assert.equal(wrong.calls.length, 0);
    assert.equal((await run(['stac', 'find'], stac)).code, 2);
  });
});
