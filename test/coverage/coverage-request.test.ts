/** parseCoverageQuery on its own: the clock is asked only when a date is given, and once. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCoverageQuery, SURVEY_FIELDS } from '../../src/coverage/coverage-request.js';

const QUERY = { point: '-89.5417,44.1188', radius: 50, resources: 'TrueOrtho,DetailDsm' };

describe('parseCoverageQuery', () => {
  it('does not read the clock when no date is given', () => {
    const parsed = parseCoverageQuery(QUERY, () => assert.fail('the clock was read'));
    assert.deepEqual([parsed.since, parsed.until], [undefined, undefined]);
  });

  it('reads it once for relative since and until, so both count from the same day', () => {
    const days = ['2025-03-01', '2025-03-02'];
    let calls = 0;
    const parsed = parseCoverageQuery({ ...QUERY, since: '24M', until: '1D' }, () => days[calls++] as string);
    assert.equal(calls, 1);
    assert.deepEqual([parsed.since, parsed.until], ['2023-03-01', '2025-02-28']);
  });

  it('returns every field when none are asked for, and only those asked for otherwise', () => {
    assert.deepEqual([...parseCoverageQuery(QUERY, () => '2025-01-01').fields], [...SURVEY_FIELDS]);
    const some = parseCoverageQuery({ ...QUERY, fields: 'captureDate,tags' }, () => '2025-01-01').fields;
    assert.deepEqual([...some], ['captureDate', 'tags']);
  });
});
