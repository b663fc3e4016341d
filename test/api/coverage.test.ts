import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compareNewestFirst } from '../../src/catalogue/catalogue.js';
import { type ApiFixture, createKey, makeSurvey, startApi } from './helpers.js';

/** GET /staticmap/v2/coverage.json over hand-made surveys with known footprints and dates. */

const TODAY = new Date('2025-06-15T12:00:00Z');
/** The AOI used by most cases: 50 m around this point is about +-0.0007 lon, +-0.00045 lat. */
const LON = 10;
const LAT = 50;
const AROUND = [9.99, 49.99, 10.01, 50.01] as [number, number, number, number];
/** Paging happens at another place so its 30 surveys do not disturb the exact cases. */
const PAGING_LON = 20;
const PAGING_LAT = -30;

interface CoverageBody {
  surveys: Array<Record<string, unknown> & { id: string }>;
  limit: number;
  offset: number;
  total: number;
  transactionToken: string;
}

describe('coverage', () => {
  let api: ApiFixture;
  let key: string;

  before(async () => {
    api = await startApi({ now: () => TODAY });
    key = (await createKey(api.services, 'acme')).key;
    const surveys = [
      makeSurvey({ id: 'a-june', captureDate: '2024-06-01', box: AROUND, tags: ['disaster:hurricane'] }),
      // Same day, later last photo: comes first.
      makeSurvey({
        id: 'b-june-later',
        captureDate: '2024-06-01',
        lastPhotoTime: '2024-06-01T05:00:00.000Z',
        box: AROUND,
      }),
      makeSurvey({ id: 'c-vert-only', captureDate: '2023-01-15', box: AROUND, types: ['Vert'] }),
      // Its east edge runs through the AOI: it intersects but does not cover.
      makeSurvey({
        id: 'd-partial',
        captureDate: '2022-03-03',
        box: [9.99, 49.99, 10.0001, 50.01],
        types: ['TrueOrtho', 'DetailDsm'],
      }),
      makeSurvey({ id: 'e-far-away', captureDate: '2024-09-09', box: [11, 51, 11.01, 51.01] }),
      // Same date and time: ordered by id.
      makeSurvey({ id: 'g-tie', captureDate: '2021-07-07', box: AROUND, types: ['DetailDsm'] }),
      makeSurvey({ id: 'f-tie', captureDate: '2021-07-07', box: AROUND, types: ['DetailDsm'] }),
    ];
    for (let i = 0; i < 30; i++) {
      const day = String((i % 28) + 1).padStart(2, '0');
      surveys.push(
        makeSurvey({
          id: `paging-${String(i).padStart(2, '0')}`,
          captureDate: `${2015 + (i % 7)}-0${(i % 9) + 1}-${day}`,
          // A few share date and time so the id tie-break is exercised across pages.
          lastPhotoTime: i % 5 === 0 ? '2000-01-01T00:00:00.000Z' : undefined,
          box: [PAGING_LON - 0.01, PAGING_LAT - 0.01, PAGING_LON + 0.01, PAGING_LAT + 0.01],
        }),
      );
    }
    for (const survey of surveys) await api.services.catalogue.put(survey);
  });
  after(() => api.close());

  async function coverage(query: string, point = `${LON},${LAT}`): Promise<CoverageBody> {
    const response = await api.get(`/staticmap/v2/coverage.json?apikey=${key}&point=${point}&radius=50&${query}`);
    assert.equal(response.status, 200, await response.clone().text());
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    return (await response.json()) as CoverageBody;
  }
  const ids = (body: CoverageBody) => body.surveys.map((s) => s.id);

  it('returns the surveys that intersect the AOI, most recent first, ties by last photo then id', async () => {
    const body = await coverage('resources=DetailDsm,TrueOrtho,Vert&filter=anyTypes');
    assert.deepEqual(ids(body), ['b-june-later', 'a-june', 'c-vert-only', 'd-partial', 'f-tie', 'g-tie']);
    assert.equal(body.total, 6);
    assert.equal(body.limit, 20);
    assert.equal(body.offset, 0);
    assert.match(body.transactionToken, /^t1\./);
  });

  it('returns every spec field, plus tags and maxZoom', async () => {
    const [survey] = (await coverage('resources=TrueOrtho')).surveys;
    assert.deepEqual(survey, {
      id: 'b-june-later',
      captureDate: '2024-06-01',
      firstPhotoTime: '2024-06-01T01:00:00.000Z',
      lastPhotoTime: '2024-06-01T05:00:00.000Z',
      pixelSizes: { TrueOrtho: 0.15 },
      tags: [],
      maxZoom: { Vert: 21, TrueOrtho: 20, DetailDsm: 19 },
    });
  });

  it('gives pixelSizes for each requested type the survey has, and only those', async () => {
    const body = await coverage('resources=Vert,DetailDsm&filter=anyTypes');
    const sizes = Object.fromEntries(body.surveys.map((s) => [s.id, s.pixelSizes]));
    assert.deepEqual(sizes['a-june'], { Vert: 0.075, DetailDsm: 0.225 });
    assert.deepEqual(sizes['c-vert-only'], { Vert: 0.075 });
    assert.deepEqual(sizes['d-partial'], { DetailDsm: 0.15 });
  });

  it('filter=allTypes (the default) needs every requested type; anyTypes needs one', async () => {
    assert.deepEqual(ids(await coverage('resources=TrueOrtho,DetailDsm')), ['b-june-later', 'a-june', 'd-partial']);
    assert.deepEqual(ids(await coverage('resources=TrueOrtho,DetailDsm&filter=allTypes')), [
      'b-june-later',
      'a-june',
      'd-partial',
    ]);
    assert.deepEqual(ids(await coverage('resources=Vert')), ['b-june-later', 'a-june', 'c-vert-only']);
    assert.deepEqual(ids(await coverage('resources=Vert,DetailDsm&filter=anyTypes')), [
      'b-june-later',
      'a-june',
      'c-vert-only',
      'd-partial',
      'f-tie',
      'g-tie',
    ]);
  });

  it('overlap=full keeps only surveys covering the whole AOI; partial is the default', async () => {
    assert.ok(ids(await coverage('resources=TrueOrtho')).includes('d-partial'));
    assert.ok(ids(await coverage('resources=TrueOrtho&overlap=partial')).includes('d-partial'));
    assert.deepEqual(ids(await coverage('resources=TrueOrtho&overlap=full')), ['b-june-later', 'a-june']);
  });

  it('since and until are inclusive calendar dates', async () => {
    const all = 'resources=Vert,DetailDsm&filter=anyTypes';
    assert.deepEqual(ids(await coverage(`${all}&since=2024-06-01`)), ['b-june-later', 'a-june']);
    assert.deepEqual(ids(await coverage(`${all}&until=2023-01-15`)), ['c-vert-only', 'd-partial', 'f-tie', 'g-tie']);
    assert.deepEqual(ids(await coverage(`${all}&since=2022-01-01&until=2023-12-31`)), ['c-vert-only', 'd-partial']);
    assert.deepEqual(ids(await coverage(`${all}&since=2021-07-07&until=2021-07-07`)), ['f-tie', 'g-tie']);
  });

  it('accepts relative dates counted back from today (UTC)', async () => {
    const all = 'resources=Vert,DetailDsm&filter=anyTypes';
    // Today is 2025-06-15: 2Y and 24M are 2023-06-15, 30M is 2022-12-15, 1000D is 2022-09-19.
    assert.deepEqual(ids(await coverage(`${all}&since=2Y`)), ['b-june-later', 'a-june']);
    assert.deepEqual(ids(await coverage(`${all}&since=24M`)), ['b-june-later', 'a-june']);
    assert.deepEqual(ids(await coverage(`${all}&since=30M`)), ['b-june-later', 'a-june', 'c-vert-only']);
    assert.deepEqual(ids(await coverage(`${all}&since=1000D`)), ['b-june-later', 'a-june', 'c-vert-only']);
    assert.deepEqual(ids(await coverage(`${all}&until=3Y`)), ['d-partial', 'f-tie', 'g-tie']);
  });

  it('fields picks survey fields; id always comes', async () => {
    const body = await coverage('resources=TrueOrtho&fields=captureDate,pixelSizes');
    assert.deepEqual(body.surveys[0], {
      id: 'b-june-later',
      captureDate: '2024-06-01',
      pixelSizes: { TrueOrtho: 0.15 },
    });
    const idsOnly = await coverage('resources=TrueOrtho&fields=id');
    assert.ok(idsOnly.surveys.every((s) => Object.keys(s).join() === 'id'));
    const tags = await coverage('resources=TrueOrtho&fields=tags');
    assert.deepEqual(tags.surveys[1], { id: 'a-june', tags: ['disaster:hurricane'] });
  });

  it('an area without surveys is a 200 with no surveys, total 0 and still a token', async () => {
    const body = await coverage('resources=Vert', '-120.5,35.25');
    assert.deepEqual(body.surveys, []);
    assert.equal(body.total, 0);
    assert.match(body.transactionToken, /^t1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('pages add up to total, in one stable order, without duplicates', async () => {
    const point = `${PAGING_LON},${PAGING_LAT}`;
    const everything = await coverage('resources=Vert&limit=1000', point);
    assert.equal(everything.total, 30);
    const expected = [...everything.surveys].map((s) => s.id);
    // The server's order is decisions.md's order.
    const byRule = [...everything.surveys]
      .map((s) =>
        makeSurvey({
          id: s.id,
          captureDate: s.captureDate as string,
          lastPhotoTime: s.lastPhotoTime as string,
          box: [0, 0, 1, 1],
        }),
      )
      .sort(compareNewestFirst)
      .map((s) => s.id);
    assert.deepEqual(expected, byRule);
    const seen: string[] = [];
    for (let offset = 0; offset < everything.total + 7; offset += 7) {
      const page = await coverage(`resources=Vert&limit=7&offset=${offset}`, point);
      assert.equal(page.limit, 7);
      assert.equal(page.offset, offset);
      assert.equal(page.total, 30);
      assert.ok(page.surveys.length <= 7);
      seen.push(...ids(page));
    }
    assert.equal(new Set(seen).size, seen.length, 'no survey twice');
    assert.deepEqual(seen, expected);
  });

  it('an offset past the end is an empty page that still reports total', async () => {
    const body = await coverage('resources=Vert&offset=500', `${PAGING_LON},${PAGING_LAT}`);
    assert.deepEqual(body.surveys, []);
    assert.equal(body.total, 30);
    assert.equal(body.offset, 500);
  });

  it('ignores query parameters it does not know, even repeated', async () => {
    const body = await coverage('resources=Vert&callback=x&_=123&_=456&__proto__=x&constructor=y&format=json');
    assert.equal(body.total, 3);
  });

  it('accepts whitespace around numbers and exponent notation in point', async () => {
    const body = await coverage('resources=Vert', '1e1,%205e1');
    assert.equal(body.total, 3);
  });
});
