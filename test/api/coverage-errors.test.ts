import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ApiFixture, createKey, errorBody, makeSurvey, startApi } from './helpers.js';

/** Every bad input is a 400 naming the parameter; every auth failure is a 401/403; never a 5xx. */

const VALID: Record<string, string> = { point: '10,50', radius: '50', resources: 'Vert' };

/** [what is wrong, query overrides (null removes), parameter the 400 must name]. */
const BAD_INPUTS: Array<[string, Record<string, string | null>, string]> = [
  ['point missing', { point: null }, 'point'],
  ['point empty', { point: '' }, 'point'],
  ['point not numeric', { point: 'abc,def' }, 'point'],
  ['point with one number', { point: '10' }, 'point'],
  ['point with three numbers', { point: '10,50,3' }, 'point'],
  ['point latitude first style garbage', { point: '50N,10E' }, 'point'],
  ['point NaN', { point: 'NaN,50' }, 'point'],
  ['point Infinity', { point: 'Infinity,50' }, 'point'],
  ['point hexadecimal', { point: '0x10,50' }, 'point'],
  ['longitude > 180', { point: '180.0001,50' }, 'point'],
  ['longitude < -180', { point: '-181,50' }, 'point'],
  ['latitude > 90', { point: '10,91' }, 'point'],
  ['latitude < -90', { point: '10,-90.5' }, 'point'],
  ['latitude beyond Web Mercator', { point: '10,86' }, 'point'],
  ['radius missing', { radius: null }, 'radius'],
  ['radius 0', { radius: '0' }, 'radius'],
  ['radius negative', { radius: '-5' }, 'radius'],
  ['radius below 1', { radius: '0.5' }, 'radius'],
  ['radius > 100', { radius: '100.01' }, 'radius'],
  ['radius 1000', { radius: '1000' }, 'radius'],
  ['radius NaN', { radius: 'NaN' }, 'radius'],
  ['radius not a number', { radius: 'ten' }, 'radius'],
  ['radius empty', { radius: '' }, 'radius'],
  ['radius hexadecimal', { radius: '0x10' }, 'radius'],
  ['radius Infinity', { radius: 'Infinity' }, 'radius'],
  ['radius overflowing to Infinity', { radius: '1e400' }, 'radius'],
  ['radius with unit', { radius: '50m' }, 'radius'],
  ['resources missing', { resources: null }, 'resources'],
  ['resources empty', { resources: '' }, 'resources'],
  ['resource in the wrong case', { resources: 'vert' }, 'resources'],
  ['unknown resource', { resources: 'Vert,Panorama' }, 'resources'],
  ['tile-only type as resource', { resources: 'North' }, 'resources'],
  ['resources with an empty entry', { resources: 'Vert,' }, 'resources'],
  ['since not a date', { since: 'yesterday' }, 'since'],
  ['since month 13', { since: '2024-13-01' }, 'since'],
  ['since 30 February', { since: '2024-02-30' }, 'since'],
  ['since with slashes', { since: '2024/01/01' }, 'since'],
  ['since unknown unit', { since: '24W' }, 'since'],
  ['since zero months', { since: '0M' }, 'since'],
  ['since lower-case unit', { since: '24m' }, 'since'],
  ['since empty', { since: '' }, 'since'],
  ['until not a date', { until: '2024-1-1' }, 'until'],
  ['since after until', { since: '2024-06-02', until: '2024-06-01' }, 'since'],
  ['filter unknown', { filter: 'all' }, 'filter'],
  ['filter in the wrong case', { filter: 'AllTypes' }, 'filter'],
  ['filter empty', { filter: '' }, 'filter'],
  ['overlap unknown', { overlap: 'none' }, 'overlap'],
  ['overlap in the wrong case', { overlap: 'FULL' }, 'overlap'],
  ['limit 0', { limit: '0' }, 'limit'],
  ['limit > 1000', { limit: '1001' }, 'limit'],
  ['limit negative', { limit: '-1' }, 'limit'],
  ['limit fractional', { limit: '1.5' }, 'limit'],
  ['limit not a number', { limit: 'all' }, 'limit'],
  ['offset negative', { offset: '-1' }, 'offset'],
  ['offset fractional', { offset: '2.5' }, 'offset'],
  ['offset not a number', { offset: 'next' }, 'offset'],
  ['offset beyond safe integers', { offset: '1e300' }, 'offset'],
  ['unknown field', { fields: 'captureDate,colour' }, 'fields'],
  ['fields empty', { fields: '' }, 'fields'],
  ['field in the wrong case', { fields: 'capturedate' }, 'fields'],
];

describe('coverage: bad input', () => {
  let api: ApiFixture;
  let key: string;

  before(async () => {
    api = await startApi();
    key = (await createKey(api.services, 'acme')).key;
    await api.services.catalogue.put(makeSurvey({ id: 's', captureDate: '2024-01-01', box: [9.9, 49.9, 10.1, 50.1] }));
  });
  after(() => api.close());

  function url(overrides: Record<string, string | null>, withKey = true): string {
    const params = new URLSearchParams(withKey ? { apikey: key } : {});
    for (const [name, value] of Object.entries({ ...VALID, ...overrides })) {
      if (value !== null) params.append(name, value);
    }
    return `/staticmap/v2/coverage.json?${params}`;
  }

  it('the valid base request succeeds', async () => {
    assert.equal((await api.get(url({}))).status, 200);
  });

  for (const [what, overrides, parameter] of BAD_INPUTS) {
    it(`${what} -> 400 naming ${parameter}`, async () => {
      const response = await api.get(url(overrides));
      const body = await errorBody(response);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(body.code, 'INVALID_PARAMETER');
      assert.equal(body.parameter, parameter, body.error);
      assert.ok(body.error.length > 10, 'a sentence a person can act on');
    });
  }

  it('since and until take any date from year 0001 (proleptic Gregorian), not year 0000', async () => {
    const listed = async (overrides: Record<string, string>) => {
      const response = await api.get(url(overrides));
      assert.equal(response.status, 200, JSON.stringify(overrides));
      return ((await response.json()) as { total: number }).total;
    };
    assert.equal(await listed({ since: '0001-01-01' }), 1);
    assert.equal(await listed({ since: '0001-01-01', until: '0004-02-29' }), 0);
    assert.equal(await listed({ since: '0099-12-31', until: '2024-01-01' }), 1);
    for (const since of ['0000-12-31', '0001-02-29', '0100-02-29']) {
      const body = await errorBody(await api.get(url({ since })));
      assert.equal(body.parameter, 'since', since);
    }
  });

  it('an unknown enum value lists the allowed values', async () => {
    const body = await errorBody(await api.get(url({ filter: 'some' })));
    assert.match(body.error, /allTypes, anyTypes/);
    const resources = await errorBody(await api.get(url({ resources: 'Ortho' })));
    assert.match(resources.error, /DetailDsm, TrueOrtho, Vert/);
  });

  const ONE_GOOD_VALUE: Record<string, string> = {
    point: '10,50',
    radius: '50',
    resources: 'Vert',
    since: '2020-01-01',
    filter: 'anyTypes',
    limit: '5',
    fields: 'id',
  };
  for (const parameter of [...Object.keys(ONE_GOOD_VALUE), 'apikey']) {
    it(`${parameter} given twice, even with the same good value -> 400 naming it`, async () => {
      const value = encodeURIComponent(ONE_GOOD_VALUE[parameter] ?? key);
      const base = parameter === 'apikey' ? url({}, false) : url({ [parameter]: null });
      const response = await api.get(`${base}&${parameter}=${value}&${parameter}=${value}`);
      const body = await errorBody(response);
      assert.equal(response.status, 400);
      assert.equal(body.parameter, parameter);
      assert.match(body.error, /more than once/);
      assert.ok(!body.error.includes(key), 'the key is never echoed');
    });
  }

  it('never answers 5xx or non-JSON, whatever the values', async () => {
    const nasty = ['%00', '%FF%FE', '%E0%A4%A', 'A'.repeat(5000), '[]', '{}', '-0', '1e-400', '٣', '🛰️', ',', '%2C%2C'];
    for (const parameter of [
      'point',
      'radius',
      'resources',
      'since',
      'until',
      'filter',
      'overlap',
      'fields',
      'limit',
      'offset',
    ]) {
      for (const value of nasty) {
        const response = await api.get(`${url({ [parameter]: null })}&${parameter}=${value}`);
        assert.ok(response.status < 500, `${parameter}=${value.slice(0, 20)} gave ${response.status}`);
        if (response.status !== 200) await errorBody(response);
        else await response.arrayBuffer();
      }
    }
  });
});

describe('coverage: authentication', () => {
  let api: ApiFixture;
  let key: string;
  let keyId: string;

  before(async () => {
    api = await startApi();
    ({ key, keyId } = await createKey(api.services, 'acme'));
  });
  after(() => api.close());

  const path = '/staticmap/v2/coverage.json?point=10,50&radius=50&resources=Vert';

  async function expectError(response: Response, status: number, code: string): Promise<void> {
    const body = await errorBody(response);
    assert.equal(response.status, status, JSON.stringify(body));
    assert.equal(body.code, code);
  }

  it('a missing key is 401 API_KEY_INVALID', async () => {
    await expectError(await api.get(path), 401, 'API_KEY_INVALID');
    await expectError(await api.get(`${path}&apikey=`), 401, 'API_KEY_INVALID');
  });

  it('a malformed or unknown key is 401', async () => {
    await expectError(await api.get(`${path}&apikey=letmein`), 401, 'API_KEY_INVALID');
    const forged = `nadir_${keyId}_${'A'.repeat(43)}`;
    await expectError(await api.get(`${path}&apikey=${forged}`), 401, 'API_KEY_INVALID');
  });

  it('authentication comes before parameter checks', async () => {
    await expectError(await api.get('/staticmap/v2/coverage.json?radius=0'), 401, 'API_KEY_INVALID');
  });

  it('accepts the key in the header Authorization: Apikey <key>, scheme in any case', async () => {
    assert.equal((await api.get(path, { headers: { authorization: `Apikey ${key}` } })).status, 200);
    assert.equal((await api.get(path, { headers: { authorization: `apikey ${key}` } })).status, 200);
    await expectError(await api.get(path, { headers: { authorization: `Bearer ${key}` } }), 401, 'API_KEY_INVALID');
  });

  it('a revoked key is 401, and only that key', async () => {
    const account = await api.services.accounts.createAccount({ name: 'revoking', rasterSubscription: true });
    const doomed = await api.services.accounts.issueApiKey(account.id);
    const kept = await api.services.accounts.issueApiKey(account.id);
    assert.equal((await api.get(`${path}&apikey=${doomed.key}`)).status, 200);
    await api.services.accounts.revokeApiKey(doomed.id);
    await expectError(await api.get(`${path}&apikey=${doomed.key}`), 401, 'API_KEY_INVALID');
    assert.equal((await api.get(`${path}&apikey=${kept.key}`)).status, 200);
  });

  it('a disabled account is 401', async () => {
    const { account, key: disabledKey } = await createKey(api.services, 'disabled');
    await api.services.accounts.setDisabled(account.id, true);
    await expectError(await api.get(`${path}&apikey=${disabledKey}`), 401, 'API_KEY_INVALID');
  });

  it('an account without the raster subscription is 403 SUBSCRIPTION_REQUIRED', async () => {
    const { account, key: tilesOnly } = await createKey(api.services, 'tiles-only', false);
    await expectError(await api.get(`${path}&apikey=${tilesOnly}`), 403, 'SUBSCRIPTION_REQUIRED');
    await api.services.accounts.setRasterSubscription(account.id, true);
    assert.equal((await api.get(`${path}&apikey=${tilesOnly}`)).status, 200);
  });
});
