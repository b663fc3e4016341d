import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { usageMonthOf } from '../../src/accounts/index.js';

describe('usageMonthOf', () => {
  it('uses the UTC month', () => {
    assert.equal(usageMonthOf(new Date('2024-01-31T23:30:00-05:00')), '2024-02');
    assert.equal(usageMonthOf(new Date('2024-03-01T00:30:00+02:00')), '2024-02');
    assert.equal(usageMonthOf(new Date('2025-12-31T23:59:59.999Z')), '2025-12');
  });
});
