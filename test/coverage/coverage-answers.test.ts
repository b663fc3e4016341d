import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { CoverageResponseSchema } from '../../src/api/coverage/coverage-schema.js';
import type { SurveyCatalogue, SurveyListing } from '../../src/catalogue/catalogue.js';
import { SqliteSurveyCatalogue } from '../../src/catalogue/sqlite-catalogue.js';
import { CoverageAnswers, type CoveragePage } from '../../src/coverage/coverage-answers.js';
import { type CoverageQueryString, parseCoverageQuery } from '../../src/coverage/coverage-request.js';
import { coverageBody, coverageBodyHead, surveyJsonText } from '../../src/coverage/survey-json.js';
import { openSqlite } from '../../src/db/sqlite.js';
import { makeSurvey } from '../api/helpers.js';
import { testClock } from '../support/clock.js';

/**
 * The coverage page cache (coverage-answers.ts): every change to the catalogue shows in the next
 * answer, from this connection or another one on the same file, and its serialised text is what
 * fastify's schema serialiser wrote for the same answer before.
 */

const AROUND: [number, number, number, number] = [9.99, 49.99, 10.01, 50.01];
const today = () => '2025-06-15';
const request = (extra: Partial<CoverageQueryString> = {}) =>
  parseCoverageQuery({ point: '10,50', radius: 50, resources: 'TrueOrtho', ...extra }, today);
/** The page's surveys' ids, and its total, read from its body (the head closed with an empty token). */
const bodyOf = (page: CoveragePage) => JSON.parse(`${page.bodyHead}"}`) as { surveys: { id: string }[]; total: number };
const ids = (page: CoveragePage) => bodyOf(page).surveys.map((s) => s.id);
const NONE = { ids: [], total: 0 };
const summary = (page: CoveragePage) => ({ ids: ids(page), total: page.total });
/** The catalogue's change marker is asked once per turn of the event loop (once-a-turn.ts). */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('CoverageAnswers', () => {
  let dir: string;
  let server: SqliteSurveyCatalogue;
  let ingest: SqliteSurveyCatalogue;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nadir-coverage-answers-'));
    const path = join(dir, 'nadir.sqlite');
    server = new SqliteSurveyCatalogue(openSqlite(path), testClock().now);
    // Another connection to the same file: `nadir ingest` beside `nadir serve`, or another worker.
    ingest = new SqliteSurveyCatalogue(openSqlite(path), testClock().now);
  });
  after(async () => {
    await ingest.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows surveys put, replaced and deleted, here or by another connection, in the next turn's answer", async () => {
    const answers = new CoverageAnswers(server, { maxMb: 16 });
    assert.deepEqual(summary(await answers.page(request())), NONE);
    await ingest.put(makeSurvey({ id: 'a', captureDate: '2024-01-01', box: AROUND }));
    await nextTurn();
    assert.deepEqual(ids(await answers.page(request())), ['a'], 'put by another connection');
    await server.put(makeSurvey({ id: 'b', captureDate: '2024-02-02', box: AROUND }));
    await nextTurn();
    assert.deepEqual(ids(await answers.page(request())), ['b', 'a'], 'put by its own');
    // Replaced by a version without TrueOrtho: no longer an answer to this request.
    await ingest.put({
      ...makeSurvey({ id: 'a', captureDate: '2024-01-01', box: AROUND, types: ['Vert'] }),
      version: 2,
    });
    await nextTurn();
    assert.deepEqual(ids(await answers.page(request())), ['b'], 'replaced');
    await ingest.delete('b');
    await nextTurn();
    assert.deepEqual(summary(await answers.page(request())), NONE, 'deleted');
  });

  it('searches once for repeated requests while nothing changes, and keeps requests apart', async () => {
    let searches = 0;
    const counted: Pick<SurveyCatalogue, 'search' | 'changeMarker'> = {
      search: (query) => {
        searches++;
        return server.search(query);
      },
      changeMarker: () => server.changeMarker(),
    };
    await server.put(makeSurvey({ id: 'c', captureDate: '2023-03-03', box: AROUND }));
    const answers = new CoverageAnswers(counted, { maxMb: 16 });
    const first = await answers.page(request());
    assert.deepEqual(await answers.page(request()), first);
    assert.equal(searches, 1);
    // Another field list, type, limit or date range is another answer.
    assert.notDeepEqual(await answers.page(request({ fields: 'captureDate' })), first);
    assert.deepEqual(summary(await answers.page(request({ since: '2024-01-01' }))), NONE);
    assert.equal((await answers.page(request({ resources: 'Vert', limit: 1 }))).total, 2);
    assert.equal(searches, 4);
    await server.delete('c');
    await nextTurn();
    await answers.page(request());
    assert.equal(searches, 5, 'searched again after a change');
  });

  it('asks the catalogue for its change marker once per turn, however many requests the turn has', async () => {
    let asked = 0;
    const counted: Pick<SurveyCatalogue, 'search' | 'changeMarker'> = {
      search: (query) => server.search(query),
      changeMarker: () => {
        asked++;
        return server.changeMarker();
      },
    };
    const answers = new CoverageAnswers(counted, { maxMb: 16 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => answers.page(request({ point: `10,${50 + i / 1e4}` }))));
    assert.equal(asked, 1);
    await nextTurn();
    await answers.page(request());
    assert.equal(asked, 2, 'asked again in the next turn');
  });

  it('remembers nothing with no memory, and forgets failed searches', async () => {
    let searches = 0;
    let fail = true;
    const flaky: Pick<SurveyCatalogue, 'search' | 'changeMarker'> = {
      search: async (query) => {
        searches++;
        if (fail) throw new Error('catalogue unreachable');
        return server.search(query);
      },
      changeMarker: () => 'unchanged',
    };
    const answers = new CoverageAnswers(flaky, { maxMb: 16 });
    await assert.rejects(answers.page(request()), /unreachable/);
    fail = false;
    await answers.page(request());
    await answers.page(request());
    assert.equal(searches, 2, 'the failure was not remembered, the success was');
    const none = new CoverageAnswers(flaky, { maxMb: 0 });
    await none.page(request());
    await none.page(request());
    assert.equal(searches, 4);
  });
});

describe('CoverageAnswers memory', () => {
  it('holds as many pages as its budget has bytes for (a working set in turn all hits)', async () => {
    let searches = 0;
    const listing = makeSurvey({ id: 'x'.repeat(250), captureDate: '2024-01-01', box: AROUND });
    const fixed: Pick<SurveyCatalogue, 'search' | 'changeMarker'> = {
      search: async () => {
        searches++;
        return { surveys: [listing], total: 1 } as never;
      },
      changeMarker: () => 'unchanged',
    };
    // ~800 bytes a page with its key: 1,200 of them fit in 1 MiB, not at twice their bytes.
    const answers = new CoverageAnswers(fixed, { maxMb: 1 });
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 1200; i++) await answers.page(request({ point: `10,${i / 1000}` }));
    }
    assert.equal(searches, 1200);
  });
});

describe('coverage body text', () => {
  it('is what fastify serialised with the response schema', async () => {
    // One app with the old route's shape: objects through the schema serialiser.
    const app = Fastify();
    let body: unknown;
    app.get('/', { schema: { response: { 200: CoverageResponseSchema } } }, async () => body);
    const quoted = makeSurvey({
      id: 'q"\\\u00e9\u{1F600}',
      captureDate: '2024-01-01',
      box: AROUND,
      types: ['DetailDsm', 'North', 'Vert', 'TrueOrtho'],
      tags: ['disaster:"storm"', 'a\nb', ''],
      gsd: 0.2000000029802,
    });
    const plain = makeSurvey({ id: 'p', captureDate: '2020-02-02', box: AROUND, types: ['Vert'] });
    const listings: SurveyListing[] = [quoted, plain];
    const extras: Partial<CoverageQueryString>[] = [
      {},
      { resources: 'Vert,DetailDsm,TrueOrtho' },
      { resources: 'DetailDsm', fields: 'maxZoom,id' },
      { resources: 'TrueOrtho,Vert', fields: 'tags,pixelSizes,captureDate', limit: 7, offset: 3 },
    ];
    for (const extra of extras) {
      const query = request(extra);
      // Every field, in any key order: the schema orders them; `id` is always there.
      const surveys = listings.map((survey) => ({
        ...survey,
        pixelSizes: Object.fromEntries(
          Object.entries(survey.assets)
            .filter(([type]) => (query.types as string[]).includes(type))
            .map(([type, asset]) => [type, Math.round(asset.gsd * 1e6) / 1e6]),
        ),
        maxZoom: Object.fromEntries(Object.entries(survey.assets).map(([type, asset]) => [type, asset.maxZoom])),
      }));
      const fieldsAsked = query.fields;
      body = {
        surveys: surveys.map((survey) =>
          Object.fromEntries(
            Object.entries(survey).filter(([field]) => field === 'id' || fieldsAsked.has(field as never)),
          ),
        ),
        limit: query.limit,
        offset: query.offset,
        total: 42,
        transactionToken: 't1.k1.AbC-_9',
      };
      const expected = (await app.inject({ method: 'GET', url: '/' })).body;
      const text = `[${listings.map((survey) => surveyJsonText(survey, query.types, query.fields)).join(',')}]`;
      assert.equal(coverageBody(coverageBodyHead(text, { ...query, total: 42 }), 't1.k1.AbC-_9').toString(), expected);
    }
    await app.close();
  });
});
