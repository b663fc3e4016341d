/**
 * DsmChange.json over the demo town: the houses the generator destroyed are found as lost height
 * and volume, intact buildings are not; and every refusal is the error table's JSON, unbilled.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_SEED, DEMO_LANDMARKS, destroyedHouses } from '@nadir/demo-town';
import { STATUS_BY_CODE } from '../../src/api/http/error-table.js';
import { errorBody } from '../api/helpers.js';
import {
  BEFORE,
  type ChangeTown,
  changeTown,
  changeUrl,
  HURRICANE,
  lonLatOfLocal,
  NO_DSM,
  OLDEST,
  tokenFor,
} from './change-town.js';

const STORE = DEMO_LANDMARKS.find((l) => l.id === 'red-roof-store') as (typeof DEMO_LANDMARKS)[number];
const DSM_GSD = 0.3;

interface Summary {
  after: { id: string; captureDate: string };
  baseline: { id: string; captureDate: string };
  threshold: number;
  aoiArea: number;
  comparedArea: number;
  comparedShare: number;
  loss: { area: number; volume: number };
  gain: { area: number; volume: number };
}

describe('DsmChange.json: what the storm took', () => {
  let town: ChangeTown;

  before(async () => {
    town = await changeTown();
  });
  after(async () => {
    await town?.close();
  });

  async function summary(lon: number, lat: number, radius: number): Promise<Summary | undefined> {
    const token = await tokenFor(town, lon, lat, radius);
    const size = Math.round((2 * radius) / DSM_GSD);
    const response = await town.api.get(
      changeUrl({ after: HURRICANE, baseline: BEFORE, lon, lat, radius, size, token, file: 'DsmChange.json' }),
    );
    if (response.status === 404) return undefined; // outside one of the surveys
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    return (await response.json()) as Summary;
  }

  test('every destroyed house inside both surveys shows its footprint lost, by at least its walls', async () => {
    const houses = destroyedHouses(DEFAULT_SEED);
    let found = 0;
    for (const house of houses) {
      const radius = Math.ceil(Math.hypot(house.halfLength, house.halfWidth)) + 2;
      const figures = await summary(house.lon, house.lat, radius);
      if (!figures || figures.comparedShare < 0.99) continue;
      const footprint = 4 * house.halfLength * house.halfWidth;
      assert.equal(figures.after.id, HURRICANE);
      assert.deepEqual(figures.baseline, { id: BEFORE, captureDate: '2025-04-02' });
      assert.ok(
        figures.loss.area >= 0.8 * footprint,
        `house at ${house.x},${house.y}: lost ${figures.loss.area} of ${footprint} m²`,
      );
      assert.ok(
        figures.loss.volume >= 0.8 * footprint * house.wallHeight,
        `house at ${house.x},${house.y}: lost ${figures.loss.volume} m³, walls alone ${footprint * house.wallHeight}`,
      );
      found++;
    }
    console.log(`destroyed houses found: ${found} of ${houses.length} in the plan`);
    assert.ok(found >= 3, `destroyed houses inside both surveys: ${found} of ${houses.length}`);
  });

  test('the store (storm-proof) lost nothing; areas add up to the AOI', async () => {
    const figures = await summary(STORE.lon, STORE.lat, 12);
    assert.ok(figures);
    assert.ok(figures.loss.area < 1, `lost ${figures.loss.area} m²`);
    assert.ok(figures.gain.area < 1, `gained ${figures.gain.area} m²`);
    assert.ok(Math.abs(figures.aoiArea - 24 * 24) < 0.01);
    assert.equal(figures.comparedShare, 1);
    assert.equal(figures.threshold, 2);
  });

  describe('refusals', () => {
    let token: string;
    let usedToken: string;
    const { lon, lat } = STORE;
    const radius = 50;
    before(async () => {
      token = await tokenFor(town, lon, lat, radius);
    });

    async function refused(request: Parameters<typeof changeUrl>[0], status: number, code: string, parameter?: string) {
      const response = await town.api.get(changeUrl(request));
      const body = await errorBody(response);
      assert.equal(response.status, status, JSON.stringify(body));
      assert.equal(body.code, code);
      assert.equal(STATUS_BY_CODE[code as keyof typeof STATUS_BY_CODE], status);
      assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.ok(body.error.length > 10);
      if (parameter) assert.equal(body.parameter, parameter);
      return body;
    }

    test('no DetailDsm in the survey or in the baseline: 404 CONTENT_NOT_FOUND', async () => {
      const common = { lon, lat, radius, size: 100, token };
      await refused({ ...common, after: NO_DSM }, 404, 'CONTENT_NOT_FOUND', 'surveyId');
      await refused({ ...common, after: HURRICANE, baseline: NO_DSM }, 404, 'CONTENT_NOT_FOUND', 'baseline');
    });

    test('the same survey twice: 400 SAME_SURVEY; a baseline not earlier: 400 BASELINE_NOT_EARLIER', async () => {
      const common = { lon, lat, radius, size: 100, token };
      await refused({ ...common, after: HURRICANE, baseline: HURRICANE }, 400, 'SAME_SURVEY', 'baseline');
      const body = await refused(
        { ...common, after: BEFORE, baseline: HURRICANE },
        400,
        'BASELINE_NOT_EARLIER',
        'baseline',
      );
      assert.match(body.error, /2025-10-20/);
    });

    test('no earlier survey: 404 NO_BASELINE; unknown ids: 404 SURVEY_NOT_FOUND', async () => {
      const common = { lon, lat, radius, size: 100, token };
      await refused({ ...common, after: OLDEST }, 404, 'NO_BASELINE');
      await refused({ ...common, after: HURRICANE, baseline: 'no-such-survey' }, 404, 'SURVEY_NOT_FOUND', 'baseline');
      await refused({ ...common, after: 'no-such-survey' }, 404, 'SURVEY_NOT_FOUND', 'surveyId');
    });

    test('surveys with no heights in common in the AOI: 404 SURVEYS_DISJOINT', async () => {
      // The north-east of town: flown in 2025 and after the storm, never in 2024.
      const place = lonLatOfLocal(250, 180);
      usedToken = await tokenFor(town, place.lon, place.lat, 40);
      const common = { ...place, radius: 40, size: 100, token: usedToken };
      await refused({ ...common, after: HURRICANE, baseline: OLDEST }, 404, 'SURVEYS_DISJOINT');
      await refused({ ...common, after: BEFORE, baseline: OLDEST }, 404, 'SURVEYS_DISJOINT');
    });

    test('bad parameters: 400 INVALID_PARAMETER naming them', async () => {
      const common = { after: HURRICANE, lon, lat, radius, size: 100, token };
      await refused({ ...common, file: 'DsmChange.gif' }, 400, 'INVALID_PARAMETER', 'format');
      await refused({ ...common, extra: { threshold: '-1' } }, 400, 'INVALID_PARAMETER', 'threshold');
      await refused({ ...common, size: 5001 }, 400, 'INVALID_PARAMETER', 'size');
      await refused({ ...common, radius: 60 }, 403, 'TRANSACTION_TOKEN_INVALID');
    });

    test('refusals are not billed', async () => {
      const { services } = town.api;
      for (const refusedToken of [token, usedToken]) {
        assert.ok(refusedToken);
        assert.equal(await services.accounts.isTokenBilled(services.tokens.decode(refusedToken).tokenId), false);
      }
    });
  });
});
