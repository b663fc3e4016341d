/**
 * Generators of input nobody should send, shared by the property-based tests of the API, the CLI
 * and ingest manifests: number spellings that are not numbers, non-finite and huge values, dates
 * at and past the calendar's edges, unicode look-alikes, percent-encoding tricks, traversal,
 * prototype keys, 8 KB values.
 */
import fc from 'fast-check';

/** Texts that have broken parsers somewhere: each is a value a field could receive. */
export const HOSTILE_TEXTS: readonly string[] = [
  '',
  ' ',
  '\t',
  'NaN',
  'nan',
  'Infinity',
  '-Infinity',
  '+Infinity',
  '1e309',
  '-1e309',
  '1e-400',
  '5e-324',
  '-0',
  '+0',
  '-0.0',
  '0x10',
  '0b1',
  '0o7',
  '1_000',
  '1,5',
  '1.5.5',
  '1e',
  '.e1',
  '.',
  '..',
  '...',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '[1]',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '%',
  '%00',
  '%zz',
  '%2',
  '%25',
  '..%2F..%2Fetc%2Fpasswd',
  '..%2f..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f%2e%2e%2f',
  '%252e%252e%252f',
  '../../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '/etc/passwd',
  'file:///etc/passwd',
  '\u0000',
  '\u0000x',
  'a\nb',
  'a\r\nb',
  '\u001b[31mred',
  '\u202e',
  '\ufeff1',
  '\u00a0',
  '\u2028',
  'Ω',
  'é',
  'e\u0301',
  '\ud83d\ude00',
  '\ud800',
  '\udfff',
  '١٢٣',
  '１２３',
  '𝟙𝟚',
  '٫',
  '9'.repeat(400),
  `1${'0'.repeat(30)}`,
  '9007199254740993',
  '-9007199254740993',
  '4294967296',
  '2147483648',
  '-2147483649',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  ['$', '{jndi:ldap://x/a}'].join(''),
  '{{7*7}}',
  '$(id)',
  'Vert\u0000',
  'vert',
  'VERT',
  ' Vert',
];

/** Characters that make the interesting ones more likely than fc.string alone. */
const SPICE = fc.constantFrom(
  '%',
  '/',
  '.',
  ',',
  '&',
  '=',
  '?',
  '#',
  '+',
  ' ',
  '\\',
  '-',
  'e',
  'x',
  '0',
  '9',
  'Ω',
  '\u0000',
  '\n',
  '\ud800',
);

/** Any text: the fixed list, random graphemes and code units, and big ones. */
export function hostileText(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...HOSTILE_TEXTS) },
    { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
    { weight: 2, arbitrary: fc.string({ unit: SPICE, maxLength: 12 }) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 8192 }).map((n) => 'A'.repeat(n)) },
    { weight: 1, arbitrary: fc.constant('%41'.repeat(2731)) },
  );
}

/** Spellings of numbers and not-quite numbers, valid or not. */
export function numberText(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.integer().map(String),
    fc.double().map(String),
    fc.double().map((n) => (Number.isFinite(n) ? n.toExponential() : String(n))),
    fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
    fc
      .tuple(
        fc.constantFrom(' ', '+', '0', '', '-', '.'),
        fc.nat(1000),
        fc.constantFrom('', '.', '.0', 'e0', 'E+0', ' ', 'm'),
      )
      .map(([a, n, b]) => `${a}${n}${b}`),
  );
}

/** A calendar date `YYYY-MM-DD` anywhere in years 0001..9999 (every one a real date). */
export function realDate(): fc.Arbitrary<string> {
  return fc
    .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
    .map((date) => date.toISOString().slice(0, 10));
}

/** Real dates at the edges: the first and last of the calendar, leap days, month ends. */
export const EDGE_DATES: readonly string[] = [
  '0001-01-01',
  '9999-12-31',
  '2024-02-29',
  '2000-02-29',
  '1600-02-29',
  '0004-02-29',
  '1900-02-28',
  '1970-01-01',
  '1969-12-31',
  '2038-01-19',
  '2026-12-31',
  '0999-12-31',
  '1000-01-01',
];

/** Strings that look like dates and are not. */
export const NOT_DATES: readonly string[] = [
  '0000-01-01',
  '1900-02-29',
  '2100-02-29',
  '2023-02-29',
  '2024-02-30',
  '2024-04-31',
  '2024-13-01',
  '2024-00-10',
  '2024-01-00',
  '2024-01-32',
  '2024-1-1',
  '20240101',
  '2024/01/01',
  '10000-01-01',
  '+002024-01-01',
  '-0001-01-01',
  '2024-01-01T00:00:00Z',
  '２０２４-01-01',
];
