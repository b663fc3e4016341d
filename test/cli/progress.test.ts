/** The CLI's progress line: bar, percentage, elapsed time and ETA, on an injected clock. */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import {
  createProgressReporter,
  estimateRemainingMs,
  formatDuration,
  formatProgressLine,
} from '../../src/cli/progress.js';
import { testClock } from '../support/clock.js';

describe('ingest progress', () => {
  test('durations read as seconds, minutes and hours', () => {
    assert.equal(formatDuration(0), '0 s');
    assert.equal(formatDuration(42_400), '42 s');
    assert.equal(formatDuration(185_000), '3 m 05 s');
    assert.equal(formatDuration(3_720_000), '1 h 02 m');
  });

  test('the ETA extrapolates the average pace, and waits until something is done', () => {
    assert.equal(estimateRemainingMs(0, 5_000), undefined);
    assert.equal(estimateRemainingMs(0.01, 5_000), undefined);
    assert.equal(estimateRemainingMs(0.25, 60_000), 180_000);
    assert.equal(estimateRemainingMs(1, 60_000), 0);
  });

  test('one line: bar, percent, elapsed, ETA, stage', () => {
    assert.equal(
      formatProgressLine('ingest m.json', 'Vert: a.tif -> COG', 0.5, 90_000),
      'ingest m.json [##############--------------]  50% 1 m 30 s, ETA 1 m 30 s  Vert: a.tif -> COG',
    );
    assert.equal(
      formatProgressLine('ingest m.json', 'checking sources', 0, 0),
      'ingest m.json [----------------------------]   0% 0 s, ETA --  checking sources',
    );
  });

  test('off a terminal: sparse lines timed by the injected clock', () => {
    const clock = testClock('2031-05-05T05:05:05.000Z');
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString()));
    const progress = createProgressReporter(out as unknown as NodeJS.WriteStream, 'ingest m.json', clock.now);
    progress.update('Vert -> COG', 0);
    clock.advance(10_000);
    progress.update('Vert -> COG', 0.05); // same stage, same 10% step: not printed
    clock.advance(10_000);
    progress.update('Vert -> COG', 0.2);
    clock.advance(80_000);
    progress.done('survey s version 1');
    assert.deepEqual(chunks.join('').split('\n'), [
      'ingest m.json 0% Vert -> COG (0 s)',
      'ingest m.json 20% Vert -> COG (20 s, ETA 1 m 20 s)',
      'ingest m.json survey s version 1 (1 m 40 s)',
      '',
    ]);
  });
});
