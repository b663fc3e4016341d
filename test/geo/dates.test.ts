import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  daysInMonth,
  isIsoDate,
  parseDateOrRelative,
  subtractRelative,
  utcDate,
  utcMonth,
} from '../../src/geo/dates.js';

describe('isIsoDate', () => {
  it('accepts real calendar dates', () => {
    for (const d of [
      '2024-02-29',
      '2000-02-29',
      '2023-12-31',
      '2023-01-01',
      '1900-01-01',
      '2026-03-31',
      '0001-01-01',
      '9999-12-31',
      '0004-02-29',
      '1600-02-29',
      '1899-12-31',
    ]) {
      assert.equal(isIsoDate(d), true, d);
    }
  });

  it('accepts every year from 0001 to 9999 (proleptic Gregorian), not 0000', () => {
    for (const d of [
      '0001-01-01',
      '0004-02-29',
      '0099-12-31',
      '0400-02-29',
      '1582-10-10',
      '1899-12-31',
      '9999-12-31',
    ]) {
      assert.equal(isIsoDate(d), true, d);
    }
    for (const d of ['0000-01-01', '0000-12-31', '0001-02-29', '0100-02-29', '0099-02-29']) {
      assert.equal(isIsoDate(d), false, d);
    }
    assert.deepEqual(
      [daysInMonth(4, 2), daysInMonth(100, 2), daysInMonth(400, 2), daysInMonth(1, 12)],
      [29, 28, 29, 31],
    );
  });

  it('rejects impossible dates, leap-year mistakes included', () => {
    for (const d of [
      '2023-02-29',
      '1900-02-29',
      '2100-02-29',
      '2024-02-30',
      '2024-04-31',
      '2024-13-01',
      '2024-00-10',
      '0000-01-01',
      '0100-02-29',
      '1700-02-29',
    ]) {
      assert.equal(isIsoDate(d), false, d);
    }
    assert.equal(isIsoDate('2024-01-00'), false);
    assert.equal(isIsoDate('2024-01-32'), false);
  });

  it('rejects other formats', () => {
    const bad = [
      '',
      '2024',
      '2024-1-05',
      '2024-01-5',
      '24-01-05',
      '2024/01/05',
      '20240105',
      ' 2024-01-05',
      '2024-01-05 ',
      '2024-01-05T00:00:00Z',
      '+2024-01-05',
      '２０２４-01-05',
      '12M',
    ];
    for (const d of bad) assert.equal(isIsoDate(d), false, JSON.stringify(d));
  });

  it('daysInMonth knows leap years', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((m) => daysInMonth(2023, m)),
      [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31],
    );
    assert.equal(daysInMonth(2024, 2), 29);
    assert.equal(daysInMonth(2000, 2), 29);
    assert.equal(daysInMonth(1900, 2), 28);
    assert.equal(daysInMonth(4, 2), 29);
    assert.equal(daysInMonth(100, 2), 28);
    assert.equal(daysInMonth(400, 2), 29);
  });
});

describe('subtractRelative', () => {
  it('months, clamped to the end of a shorter month', () => {
    assert.equal(subtractRelative('2026-03-31', 24, 'M'), '2024-03-31');
    assert.equal(subtractRelative('2024-03-31', 1, 'M'), '2024-02-29');
    assert.equal(subtractRelative('2023-03-31', 1, 'M'), '2023-02-28');
    assert.equal(subtractRelative('2024-05-31', 1, 'M'), '2024-04-30');
    assert.equal(subtractRelative('2024-01-15', 1, 'M'), '2023-12-15');
    assert.equal(subtractRelative('2024-01-15', 13, 'M'), '2022-12-15');
    assert.equal(subtractRelative('2024-06-10', 12, 'M'), '2023-06-10');
  });

  it('years, with 29 February', () => {
    assert.equal(subtractRelative('2024-02-29', 2, 'Y'), '2022-02-28');
    assert.equal(subtractRelative('2024-02-29', 4, 'Y'), '2020-02-29');
    assert.equal(subtractRelative('2026-07-04', 1, 'Y'), '2025-07-04');
    assert.equal(subtractRelative('2026-07-04', 1, 'Y'), subtractRelative('2026-07-04', 12, 'M'));
  });

  it('days, across month, leap-day and year boundaries', () => {
    assert.equal(subtractRelative('2024-01-15', 30, 'D'), '2023-12-16');
    assert.equal(subtractRelative('2025-01-01', 1, 'D'), '2024-12-31');
    assert.equal(subtractRelative('2024-03-01', 1, 'D'), '2024-02-29');
    assert.equal(subtractRelative('2023-03-01', 1, 'D'), '2023-02-28');
    assert.equal(subtractRelative('2024-12-31', 366, 'D'), '2023-12-31');
    // Around a DST change in most zones: pure calendar arithmetic, no hour drift.
    assert.equal(subtractRelative('2024-03-31', 1, 'D'), '2024-03-30');
    assert.equal(subtractRelative('2024-10-28', 1, 'D'), '2024-10-27');
  });

  it('huge ages stay well-formed dates that sort before every real date', () => {
    assert.equal(subtractRelative('2026-03-31', 9999, 'Y'), '0001-01-01');
    assert.equal(subtractRelative('2026-03-31', 2100, 'Y'), '0001-01-01');
    assert.equal(subtractRelative('2026-03-31', 2025, 'Y'), '0001-03-31');
    for (const unit of ['Y', 'M', 'D'] as const) {
      for (let n = 1; n <= 9999; n++) {
        const d = subtractRelative('2026-03-31', n, unit);
        assert.match(d, /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, `${n}${unit} = ${d}`);
        assert.ok(isIsoDate(d), `${n}${unit} = ${d}`);
      }
    }
  });

  it('counts days back across the first centuries, and stops at 0001-01-01', () => {
    assert.equal(subtractRelative('0050-03-01', 1, 'D'), '0050-02-28');
    assert.equal(subtractRelative('0004-03-01', 1, 'D'), '0004-02-29');
    assert.equal(subtractRelative('0001-01-05', 4, 'D'), '0001-01-01');
    assert.equal(subtractRelative('0001-01-05', 5, 'D'), '0001-01-01');
    assert.equal(subtractRelative('0002-01-01', 1, 'Y'), '0001-01-01');
  });

  it('always yields a valid ISO date', () => {
    for (const today of ['2024-02-29', '2023-12-31', '2024-01-01', '2026-03-31']) {
      for (let n = 1; n <= 40; n++) {
        for (const unit of ['Y', 'M', 'D'] as const) {
          const d = subtractRelative(today, n, unit);
          assert.ok(isIsoDate(d), `${today} - ${n}${unit} = ${d}`);
          assert.ok(d < today);
        }
      }
    }
  });
});

describe('parseDateOrRelative', () => {
  const today = '2026-03-31';
  it('passes ISO dates through and resolves relative values against today', () => {
    assert.equal(parseDateOrRelative('2024-02-29', today), '2024-02-29');
    assert.equal(parseDateOrRelative('24M', today), '2024-03-31');
    assert.equal(parseDateOrRelative('12M', today), '2025-03-31');
    assert.equal(parseDateOrRelative('1M', today), '2026-02-28');
    assert.equal(parseDateOrRelative('2Y', today), '2024-03-31');
    assert.equal(parseDateOrRelative('30D', today), '2026-03-01');
    assert.equal(parseDateOrRelative('9999D', today), subtractRelative(today, 9999, 'D'));
  });

  it('rejects malformed values (case-sensitive units, positive integers only)', () => {
    const bad = [
      '',
      '0M',
      '00M',
      '012M',
      '-1M',
      '+1M',
      '1W',
      '1H',
      '12',
      'M',
      '12m',
      '2y',
      '30d',
      '1.5M',
      ' 12M',
      '12M ',
      '12 M',
      '1M2D',
      '10000D',
      '2024-02-30',
      '2023-02-29',
      'yesterday',
    ];
    for (const value of bad) assert.equal(parseDateOrRelative(value, today), undefined, JSON.stringify(value));
  });
});

describe('UTC helpers', () => {
  it('utcDate and utcMonth use UTC, not local time', () => {
    const instant = new Date('2024-12-31T23:30:00-05:00'); // 2025-01-01T04:30Z
    assert.equal(utcDate(instant), '2025-01-01');
    assert.equal(utcMonth(instant), '2025-01');
    assert.equal(utcDate(new Date(Date.UTC(2024, 1, 29, 23, 59, 59))), '2024-02-29');
  });
});
