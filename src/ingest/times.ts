import { NadirError, quoted } from '../errors.js';
import { isIsoDate } from '../geo/dates.js';

// ISO 8601 with an explicit zone: an instant without one would be ambiguous.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * `2024-03-14T09:02:11-05:00` -> `2024-03-14T14:02:11Z` (second precision, UTC). The date must be
 * a real one: Date.parse reads 2024-02-30 as 1 March.
 */
export function normalizeUtcInstant(value: string, field: string): string {
  const ms = ISO_INSTANT.test(value) && isIsoDate(value.slice(0, 10)) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new NadirError(
      'INVALID_MANIFEST',
      `"${field}" must be an ISO 8601 timestamp with a zone, e.g. 2024-03-14T14:02:11Z, got ${quoted(value)}`,
    );
  }
  return utcInstant(ms, () => `"${field}" ${quoted(value)} is`);
}

/**
 * An instant as `YYYY-MM-DDTHH:MM:SSZ`, which holds the years 0000 to 9999 only (beyond, ISO
 * writes `+010000-...`): outside them, INVALID_MANIFEST saying what (`what()` starts the sentence).
 */
function utcInstant(ms: number, what: () => string): string {
  const iso = new Date(ms).toISOString();
  if (!/^\d{4}-/.test(iso)) {
    throw new NadirError('INVALID_MANIFEST', `${what()} outside the years 0000 to 9999 in UTC, which nadir stores`);
  }
  return `${iso.slice(0, 19)}Z`;
}

/** Milliseconds of a UTC wall-clock time: Date.UTC, but years 0-99 are years 0-99, not 1900-1999. */
function utcMs(year: number, monthIndex: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(Date.UTC(2000, 0, 1, hour, minute, second));
  date.setUTCFullYear(year, monthIndex, day);
  return date.getTime();
}

/** Offset of `timezone` from UTC in minutes at the instant `utcMs`. */
function offsetMinutes(at: number, timezone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    era: 'short',
  }).formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  // Intl counts years before 1 as 1 BC, 2 BC, ...: year 0 is 1 BC.
  const bc = parts.find((p) => p.type === 'era')?.value === 'BC';
  const year = bc ? 1 - get('year') : get('year');
  const asUtc = utcMs(year, get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((asUtc - at) / 60000);
}

/** UTC instant of a local wall-clock time (two passes settle DST transitions). */
function localToUtcMs(date: string, hms: [number, number, number], timezone: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = utcMs(y, m - 1, d, ...hms);
  let utc = wall - offsetMinutes(wall, timezone) * 60000;
  utc = wall - offsetMinutes(utc, timezone) * 60000;
  return utc;
}

/** Start and end (inclusive, to the second) of a local calendar day, as UTC instants. */
export function localDayBoundsUtc(date: string, timezone: string | undefined): [string, string] {
  const zone = timezone ?? 'UTC';
  const what = () => `"captureDate" ${date}${timezone ? ` in ${timezone}` : ''} runs`;
  const fmt = (ms: number) => utcInstant(ms, what);
  return [fmt(localToUtcMs(date, [0, 0, 0], zone)), fmt(localToUtcMs(date, [23, 59, 59], zone))];
}
