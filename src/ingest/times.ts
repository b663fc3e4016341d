import { NadirError } from '../errors.js';

// ISO 8601 with an explicit zone: an instant without one would be ambiguous.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** `2024-03-14T09:02:11-05:00` -> `2024-03-14T14:02:11Z` (second precision, UTC). */
export function normalizeUtcInstant(value: string, field: string): string {
  const ms = ISO_INSTANT.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new NadirError(
      'INVALID_MANIFEST',
      `"${field}" must be an ISO 8601 timestamp with a zone, e.g. 2024-03-14T14:02:11Z, got ${JSON.stringify(value)}`,
    );
  }
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** Offset of `timezone` from UTC in minutes at the instant `utcMs`. */
function offsetMinutes(utcMs: number, timezone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utcMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((asUtc - utcMs) / 60000);
}

/** UTC instant of a local wall-clock time (two passes settle DST transitions). */
function localToUtcMs(date: string, hms: [number, number, number], timezone: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d, ...hms);
  let utc = wall - offsetMinutes(wall, timezone) * 60000;
  utc = wall - offsetMinutes(utc, timezone) * 60000;
  return utc;
}

/** Start and end (inclusive, to the second) of a local calendar day, as UTC instants. */
export function localDayBoundsUtc(date: string, timezone: string | undefined): [string, string] {
  const zone = timezone ?? 'UTC';
  const fmt = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
  return [fmt(localToUtcMs(date, [0, 0, 0], zone)), fmt(localToUtcMs(date, [23, 59, 59], zone))];
}
