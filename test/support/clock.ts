/**
 * The clock tests run on. Nothing in a test reads the wall clock for a date: a service, store or
 * codec under test gets one of these. The default instant comes from NADIR_TEST_NOW when it is set,
 * so the whole suite can be run as if on another day (docs/testing.md says how that is checked).
 */
import type { Clock } from '../../src/clock.js';

/** The instant tests start at unless they choose one: a fixed date, never today. */
export const TEST_NOW = new Date(process.env.NADIR_TEST_NOW ?? '2026-11-22T12:00:00.000Z');
if (Number.isNaN(TEST_NOW.getTime())) throw new Error(`NADIR_TEST_NOW is not a date: ${process.env.NADIR_TEST_NOW}`);

/** A clock that stands still until a test moves it. */
export interface TestClock {
  /** What the service is given. */
  readonly now: Clock;
  set(instant: Date | string): void;
  advance(ms: number): void;
}

export function testClock(start: Date | string = TEST_NOW): TestClock {
  let current = new Date(start).getTime();
  if (Number.isNaN(current)) throw new Error(`not a date: ${String(start)}`);
  return {
    now: () => new Date(current),
    set(instant) {
      current = new Date(instant).getTime();
    },
    advance(ms) {
      current += ms;
    },
  };
}

/**
 * This process's environment without libfaketime (scripts/test-dates.sh), for the third-party
 * programs the tests start (Chromium, PostgreSQL, Redis, nginx): libfaketime makes Chromium take
 * a minute to start and hangs Redis, and the date under test is nadir's, not theirs.
 */
export function realClockEnvironment(): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && name !== 'LD_PRELOAD' && !name.startsWith('FAKETIME')) environment[name] = value;
  }
  return environment;
}
