/** Calendar dates as the API speaks them: `YYYY-MM-DD` local dates, and relative `nY`/`nM`/`nD`. */

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const RELATIVE = /^([1-9]\d{0,3})([YMD])$/;

/**
 * Whether `value` is a real calendar date written `YYYY-MM-DD`, 0001-01-01 to 9999-12-31 in the
 * proleptic Gregorian calendar (rejects 2024-02-30). The earliest is what the oldest relative
 * age (`9999Y`) comes to, so a date filter takes every date an age can give.
 */
export function isIsoDate(value: string): boolean {
  const match = ISO_DATE.exec(value);
  if (!match) return false;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  return d <= daysInMonth(y, m);
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in `month` (1-12) of `year`, by the Gregorian rule (Date.UTC would read years 0-99 as 1900-1999). */
export function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : (MONTH_DAYS[month - 1] as number);
}

/** Midnight UTC of a date, in ms since the epoch, for any year (setUTCFullYear takes 0-99 as is). */
function utcMidnight(year: number, month: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime();
}

function formatDate(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/**
 * `24M` = the date 24 months before `today` (clamped to the month's last day: 2024-03-31 minus
 * 1M is 2024-02-29). `today` is a `YYYY-MM-DD` date so callers decide which timezone "today" is in.
 */
export function subtractRelative(today: string, amount: number, unit: 'Y' | 'M' | 'D'): string {
  const [y, m, d] = today.split('-').map(Number) as [number, number, number];
  if (unit === 'D') {
    const t = new Date(utcMidnight(y, m, d) - amount * 86_400_000);
    if (t.getUTCFullYear() < 1) return '0001-01-01';
    return formatDate(t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate());
  }
  const months = unit === 'Y' ? amount * 12 : amount;
  const total = y * 12 + (m - 1) - months;
  // Further back than year 1 (e.g. 9999Y): the earliest date, still a well-formed YYYY-MM-DD.
  if (total < 12) return '0001-01-01';
  const year = Math.floor(total / 12);
  const month = (total % 12) + 1;
  return formatDate(year, month, Math.min(d, daysInMonth(year, month)));
}

/** Parses `YYYY-MM-DD` or a relative value into a `YYYY-MM-DD`, or undefined when malformed. */
export function parseDateOrRelative(value: string, today: string): string | undefined {
  if (isIsoDate(value)) return value;
  const match = RELATIVE.exec(value);
  if (!match) return undefined;
  return subtractRelative(today, Number(match[1]), match[2] as 'Y' | 'M' | 'D');
}

/** Today's date in UTC as `YYYY-MM-DD`. */
export function utcDate(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** The billing month of an instant, `YYYY-MM` in UTC. */
export function utcMonth(now: Date): string {
  return now.toISOString().slice(0, 7);
}
