/**
 * Generated requests for the API's property-based tests (properties.test.ts), and what docs/api.md
 * says each must be answered with. Every case is built from parts whose verdict is known:
 * `valid` parts come from what the docs allow, `invalid` ones from what they refuse, `unknown`
 * ones from the hostile pools (their answer is only held to the error contract). A case is
 * clean (every part valid), has exactly one bad part, or is chaos (each part drawn by its own
 * weights); its expectation follows the documented order of checks of its endpoint.
 *
 * Enumerations and limits are written out here from docs/api.md rather than imported from src/:
 * the tests are an independent reading of the documentation.
 */
import fc from 'fast-check';
import { browserClientFiles } from '../../src/api/map-page/map-page-route.js';
import { EDGE_DATES, hostileText, NOT_DATES, numberText, realDate } from '../support/hostile-input.js';

export type Verdict = 'valid' | 'invalid' | 'unknown';

/** A decoded value and whether the docs allow it. */
export interface Part {
  text: string;
  verdict: Verdict;
}

const invalid = (text: string): Part => ({ text, verdict: 'invalid' });

function worst(...verdicts: Verdict[]): Verdict {
  if (verdicts.includes('invalid')) return 'invalid';
  if (verdicts.includes('unknown')) return 'unknown';
  return 'valid';
}

/** `arbitrary`'s value with probability `p`, else undefined. */
export function sometimes<T>(arbitrary: fc.Arbitrary<T>, p: number): fc.Arbitrary<T | undefined> {
  return fc.oneof(
    { weight: Math.round((1 - p) * 100), arbitrary: fc.constant(undefined) },
    { weight: Math.round(p * 100), arbitrary },
  );
}

// ---------------------------------------------------------------------------------------------
// Mixing valid and bad parts.

/**
 * A part's value of each kind, drawn together; which one a case sends depends on the case's mix.
 * Drawing all of them keeps every generator static, so cases shrink well.
 */
export interface Choice<T = string> {
  valid: T;
  invalid: T;
  unknown: T;
  roll: number;
  /** Weights of valid, invalid and unknown in a `chaos` case. */
  weights: readonly [number, number, number];
}

export function choice<T>(
  allowed: fc.Arbitrary<T>,
  refused: fc.Arbitrary<T>,
  hostile: fc.Arbitrary<T>,
  weights: readonly [number, number, number] = [6, 3, 2],
): fc.Arbitrary<Choice<T>> {
  return fc.record({
    valid: allowed,
    invalid: refused,
    unknown: hostile,
    roll: fc.nat(),
    weights: fc.constant(weights),
  });
}

/** Values of one parameter: allowed ones, refused ones, hostile ones. */
export function values(
  allowed: fc.Arbitrary<string>,
  refused: fc.Arbitrary<string>,
  weights?: readonly [number, number, number],
): fc.Arbitrary<Choice> {
  return choice(allowed, refused, hostileText(), weights);
}

/**
 * How a case mixes its parts: `clean`, every one valid; `one`, exactly one of them (the
 * `target`-th) refused or hostile; `chaos`, each drawn by its own weights.
 */
export interface Mix {
  mode: 'clean' | 'one' | 'chaos';
  target: number;
}

export const MIX: fc.Arbitrary<Mix> = fc.record({
  mode: fc.oneof(
    { weight: 4, arbitrary: fc.constant('clean' as const) },
    { weight: 4, arbitrary: fc.constant('one' as const) },
    { weight: 2, arbitrary: fc.constant('chaos' as const) },
  ),
  target: fc.nat(),
});

type Role = 'clean' | 'bad' | 'chaos';

/** The role of the `index`-th of `count` parts in a case of this mix. */
export function roleOf(mix: Mix, index: number, count: number): Role {
  if (mix.mode === 'clean') return 'clean';
  if (mix.mode === 'chaos') return 'chaos';
  return index === mix.target % count ? 'bad' : 'clean';
}

export function kindOf(c: Pick<Choice<unknown>, 'roll' | 'weights'>, role: Role): Verdict {
  if (role === 'clean') return 'valid';
  if (role === 'bad') return c.roll % 5 < 3 ? 'invalid' : 'unknown';
  const [v, i, u] = c.weights;
  const r = c.roll % (v + i + u);
  return r < v ? 'valid' : r < v + i ? 'invalid' : 'unknown';
}

export function pick(c: Choice, role: Role): Part {
  const verdict = kindOf(c, role);
  return { text: c[verdict], verdict };
}

// ---------------------------------------------------------------------------------------------
// Encoding: how a decoded value goes on the wire.

/**
 * `component`: every byte but the unreserved ones percent-encoded (encodeURIComponent, without
 * its exceptions for lone surrogates); `loose`: commas, colons and the like left as they are,
 * as many clients send them (and as the tile lane takes them); `plus`: spaces as `+`, as HTML
 * forms send them. Those three decode to the same value. `raw`: the text as it is, but for
 * what cannot be sent at all; `double`: encoded twice. Those two send a different value.
 */
export type Encoding = 'component' | 'loose' | 'plus' | 'raw' | 'double';

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const LOOSE = /^[A-Za-z0-9\-._~,:@!$'()*;/]$/;

function percentEncode(text: string, keep: RegExp): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += byte < 0x80 && keep.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** What a client cannot put in a request line: controls, space, DEL, `#`; other bytes go raw. */
function rawText(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out +=
      byte <= 0x20 || byte === 0x7f || byte === 0x23
        ? `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
        : String.fromCharCode(byte);
  }
  return out;
}

export function encode(text: string, encoding: Encoding): string {
  switch (encoding) {
    case 'component':
      return percentEncode(text, UNRESERVED);
    case 'loose':
      return percentEncode(text, LOOSE);
    case 'plus':
      return text
        .split(' ')
        .map((piece) => percentEncode(piece, UNRESERVED))
        .join('+');
    case 'raw':
      return rawText(text);
    case 'double':
      return percentEncode(percentEncode(text, UNRESERVED), UNRESERVED);
  }
}

/** Encodings that keep the value; the others make its verdict unknown. */
const FAITHFUL: fc.Arbitrary<Encoding> = fc.constantFrom('component', 'loose', 'plus');
const ENCODING: fc.Arbitrary<Encoding> = fc.oneof(
  { weight: 8, arbitrary: FAITHFUL },
  { weight: 1, arbitrary: fc.constantFrom<Encoding>('raw', 'double') },
);

const FAITHFUL_ENCODINGS: readonly Encoding[] = ['component', 'loose', 'plus'];

/**
 * The `index`-th parameter's encodings from one seed (drawing each costs more than the rest of a
 * case): a faithful one, for a clean part; another for the others, raw or double one time in
 * five; and whether the name's first letter is percent-encoded (one time in five).
 */
export function encodingsOf(seed: number, index: number): [Encoding, Encoding, boolean] {
  const [a = 0, b = 0, c = 0] = shuffled([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], seed + index * 7919);
  const faithful = FAITHFUL_ENCODINGS[a % 3] as Encoding;
  const any: Encoding = b === 0 ? 'raw' : b === 1 ? 'double' : faithful;
  return [faithful, any, c < 2];
}

/** One `name=value` of a query string. `value` undefined: the name alone, no `=`. */
export interface Pair {
  name: string;
  value: string | undefined;
  encoding: Encoding;
  /** The name's first letter percent-encoded (`%61pikey`): the same parameter once decoded. */
  encodedName: boolean;
}

export function renderPair(pair: Pair): string {
  const name =
    pair.encodedName && pair.name.length > 0
      ? `%${pair.name.charCodeAt(0).toString(16).toUpperCase()}${encode(pair.name.slice(1), 'component')}`
      : encode(pair.name, 'component');
  return pair.value === undefined ? name : `${name}=${encode(pair.value, pair.encoding)}`;
}

/** Query pairs in an order picked by `seed` (0: as generated). */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const j = (((t ^ (t >>> 14)) >>> 0) % (i + 1)) as number;
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The cases.

export type Endpoint = 'coverage' | 'imagery' | 'location-tile' | 'survey-tile' | 'gis' | 'system' | 'other';

export interface Expectation {
  statuses: number[];
  /** The error code, when the status is an error. */
  code?: string;
}

export interface ApiCase {
  endpoint: Endpoint;
  method: string;
  /** The path as sent (already encoded). */
  path: string;
  pairs: Pair[];
  /** Seed of the order the pairs are sent in. */
  order: number;
  headers: Record<string, string>;
  body?: string;
  /** Sent over real HTTP (else fastify's inject, when inject sends the same URL). */
  http: boolean;
  /** Every part is allowed: the answer must be a success (and stay one when reordered). */
  valid: boolean;
  /** Content types a 2xx may have (`type/subtype`). */
  types: string[];
  expect?: Expectation;
}

/** `order` of a case whose pairs are sent as listed. */
export const AS_LISTED = -1;

/** The pairs in the order they are sent. */
export function sentPairs(c: Pick<ApiCase, 'pairs' | 'order'>): Pair[] {
  return c.order === AS_LISTED ? [...c.pairs] : shuffled(c.pairs, c.order);
}

export function urlOf(c: Pick<ApiCase, 'path' | 'pairs' | 'order'>): string {
  if (c.pairs.length === 0) return c.path;
  return `${c.path}?${sentPairs(c).map(renderPair).join('&')}`;
}

/** What the test server holds; the generators aim at it. */
export interface World {
  key: string;
  /** A key of an account without the raster subscription. */
  plainKey: string;
  revokedKey: string;
  disabledKey: string;
  centre: { lon: number; lat: number };
  /** A token for (centre, tokenRadius). */
  token: string;
  tokenRadius: number;
  /** A token for `far` (no survey there), radius farRadius. */
  farToken: string;
  far: { lon: number; lat: number };
  farRadius: number;
  expiredToken: string;
  /** Issued to a key revoked since. */
  revokedToken: string;
  surveys: { id: string; raster: string[]; tiles: string[] }[];
  unknownSurvey: string;
  /** Tile rows and columns the surveys cover, by zoom (`served`: a zoom they have imagery at). */
  tileRanges: { z: number; x0: number; x1: number; y0: number; y1: number; served: boolean }[];
  etag: string;
}

const RASTER_TYPES = ['DetailDsm', 'TrueOrtho', 'Vert'];
const RASTER_FORMATS = ['tif', 'jpg', 'png', 'jgw', 'pgw', 'tfw'];
const TILE_TYPES = ['Vert', 'North', 'South', 'East', 'West', 'TrueOrtho'];
const TILE_FORMATS = ['jpg', 'png', 'img'];
const SURVEY_FIELDS = ['id', 'captureDate', 'firstPhotoTime', 'lastPhotoTime', 'pixelSizes', 'tags', 'maxZoom'];
const MAX_LATITUDE = 85.0511287798066;
const CONTENT_TYPE_OF_FORMAT: Record<string, string[]> = {
  tif: ['image/tiff'],
  jpg: ['image/jpeg'],
  png: ['image/png'],
  jgw: ['text/plain'],
  pgw: ['text/plain'],
  tfw: ['text/plain'],
  img: ['image/jpeg', 'image/png'],
};

// ---------------------------------------------------------------------------------------------
// Parameter values.

function decimal(min: number, max: number): fc.Arbitrary<string> {
  return fc.oneof(
    fc.integer({ min: Math.ceil(min), max: Math.floor(max) }).map(String),
    fc.double({ min, max, noNaN: true }).map(String),
    fc.double({ min, max, noNaN: true }).map((n) => n.toExponential()),
    fc.integer({ min: Math.ceil(min), max: Math.floor(max) }).map((n) => ` ${n} `),
  );
}

const BAD_RADII = [
  '0',
  '0.99',
  '-1',
  '100.0001',
  '101',
  '1e3',
  '-0',
  'NaN',
  'Infinity',
  '0x10',
  '50m',
  '',
  '1,5',
  '1e400',
];

const radius = (max = 100) =>
  values(
    fc.oneof(decimal(1, max), fc.constantFrom('1', String(max), `${max}.0`, '1e0', '1.0')),
    fc.constantFrom(...BAD_RADII),
  );

const lonLat = (lon: number, lat: number) => `${lon},${lat}`;

const anyPoint = fc.oneof(
  fc
    .tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -85.05, max: 85.05, noNaN: true }))
    .map(([lon, lat]) => lonLat(lon, lat)),
  fc.constantFrom(
    '180,0',
    '-180,0',
    `0,${MAX_LATITUDE}`,
    `0,-${MAX_LATITUDE}`,
    '0,0',
    '-0,-0',
    ' 10 , 45 ',
    '1e1,4.5e1',
  ),
);

const BAD_POINTS = [
  '181,0',
  '180.0000001,0',
  '0,85.06',
  '0,90',
  '0,-91',
  '10',
  '10,45,1',
  '10;45',
  '',
  ',',
  '10,',
  ',45',
  'NaN,0',
  'Infinity,0',
  '0x1,0',
  '10 45',
  '1e400,0',
  '45N,10E',
];

const point = values(anyPoint, fc.constantFrom(...BAD_POINTS));

const resources = values(
  fc
    .tuple(fc.subarray(RASTER_TYPES, { minLength: 1 }), fc.boolean(), fc.boolean())
    .map(([types, repeat, spaced]) => (repeat ? [...types, types[0]] : types).join(spaced ? ' , ' : ',')),
  fc.constantFrom('', 'vert', 'North', 'Vert,', ',Vert', 'Vert,,TrueOrtho', 'Vert;TrueOrtho', 'All', 'DETAILDSM'),
);

export const relative = fc
  .tuple(fc.integer({ min: 1, max: 9999 }), fc.constantFrom('Y', 'M', 'D'))
  .map(([n, u]) => `${n}${u}`);
const BAD_RELATIVE = ['0D', '10000D', '1d', '-1D', '1.5Y', '1W', 'D', 'Y1', '01D', '1 D'];
export const anyDate = fc.oneof(
  { weight: 3, arbitrary: realDate() },
  { weight: 2, arbitrary: fc.constantFrom(...EDGE_DATES) },
);
const badDate = fc.constantFrom(...NOT_DATES, ...BAD_RELATIVE, '');

interface Range {
  since?: string;
  until?: string;
}

/**
 * `since` and `until` as one part. Allowed: absent, one of them (a date or an age), or both
 * dates in order. Refused: both out of order, or a date that is not one. Hostile: anything.
 */
const dateRange: fc.Arbitrary<Choice<Range>> = choice<Range>(
  fc.oneof(
    { weight: 3, arbitrary: fc.constant({}) },
    { weight: 2, arbitrary: fc.oneof(anyDate, relative).map((since) => ({ since })) },
    { weight: 2, arbitrary: fc.oneof(anyDate, relative).map((until) => ({ until })) },
    {
      weight: 2,
      arbitrary: fc.tuple(anyDate, anyDate).map(([a, b]) => (a <= b ? { since: a, until: b } : { since: b, until: a })),
    },
  ),
  fc.oneof(
    fc
      .tuple(anyDate, anyDate)
      .filter(([a, b]) => a !== b)
      .map(([a, b]) => (a > b ? { since: a, until: b } : { since: b, until: a })),
    badDate.map((since) => ({ since })),
    badDate.map((until) => ({ until })),
  ),
  fc.oneof(
    hostileText().map((since) => ({ since })),
    hostileText().map((until) => ({ until })),
  ),
);

export const enumValue = (allowed: string[], refused: string[]) =>
  values(fc.constantFrom(...allowed), fc.constantFrom(...refused, ''), [6, 2, 1]);

const fields = values(
  fc.subarray(SURVEY_FIELDS, { minLength: 1 }).map((list) => list.join(',')),
  fc.constantFrom('', 'ID', 'id,', 'footprint', 'captureDate,,id', 'assets'),
);

export const integerIn = (min: number, max: number, refused: string[]) =>
  values(
    fc.oneof(fc.integer({ min, max }).map(String), fc.constantFrom(String(min), String(max))),
    fc.constantFrom(...refused),
  );

export const tags = values(
  fc.constantFrom('disaster', 'disaster:hurricane', 'weather:clear', 'disaster,weather', 'x_y-z:A-1', 'disaster:fire'),
  fc.constantFrom('disaster:', ':x', 'a b', '', 'disaster,,x', 'a:b:c', 'é', 'disaster:hurricane:x'),
);

// ---------------------------------------------------------------------------------------------
// Query strings.

/** A declared parameter: its values, and whether leaving it out is a refusal. */
export interface Parameter {
  values: fc.Arbitrary<Choice>;
  required?: boolean;
  /** How often an optional one is sent (default 0.6). */
  presence?: number;
}

/** What a query's declared parameters drew, before a mix picks among it. */
interface QueryDraw {
  present: (Choice | undefined)[];
  range: Choice<Range> | undefined;
  /** Seed of each parameter's encodings (encodingsOf). */
  encodings: number;
  extras: Pair[];
  repeat: [number, string] | undefined;
}

/** Parameters no endpoint declares: ignored, even repeated (docs/api.md "Conventions"). */
const extraPairs: fc.Arbitrary<Pair[]> = fc.array(
  fc.record({
    name: fc.constantFrom('_', 'cachebust', 'callback', 'format', 'apiKey', 'APIKEY', 'x', 'v', ''),
    value: fc.option(fc.oneof(fc.nat().map(String), fc.string({ maxLength: 12 })), { nil: undefined }),
    encoding: FAITHFUL,
    encodedName: fc.constant(false),
  }),
  { maxLength: 3 },
);

/** The hostile kind of extras: values from the hostile pools, sent raw or double-encoded too. */
const hostileExtraPairs: fc.Arbitrary<Pair[]> = fc.array(
  fc.record({
    name: fc.oneof(fc.constantFrom('_', 'callback', 'apiKey', ''), hostileText()),
    value: fc.option(hostileText(), { nil: undefined }),
    encoding: ENCODING,
    encodedName: fc.constant(false),
  }),
  { maxLength: 3 },
);

/** `presence`: how often the date range is sent. */
export function queryDraw(
  parameters: Record<string, Parameter>,
  dates: boolean,
  presence = 1,
): fc.Arbitrary<QueryDraw> {
  const specs = Object.values(parameters);
  return fc.record({
    present: fc.tuple(
      ...specs.map((spec) => (spec.required ? spec.values : sometimes(spec.values, spec.presence ?? 0.6))),
    ),
    range: dates ? sometimes(dateRange, presence) : fc.constant(undefined),
    encodings: fc.nat(),
    extras: fc.oneof({ weight: 4, arbitrary: extraPairs }, { weight: 1, arbitrary: hostileExtraPairs }),
    repeat: sometimes(fc.tuple(fc.nat(), hostileText()), 0.5),
  });
}

interface Query {
  pairs: Pair[];
  verdict: Verdict;
  /** A declared parameter given twice (the documented 400). */
  duplicated: boolean;
}

/**
 * The pairs of a query as the mix picks them. A clean part is present (if required) and encoded
 * faithfully; a bad or chaos one may be left out, encoded so it changes, or given twice.
 * `first` is the role index of the first parameter (the ones before are the path's).
 */
export function buildQuery(
  parameters: Record<string, Parameter>,
  draw: QueryDraw,
  mix: Mix,
  first: number,
  count: number,
): Query {
  const names = Object.keys(parameters);
  const pairs: Pair[] = [];
  const verdicts: Verdict[] = [];
  const add = (name: string, value: Part, role: Role, index: number) => {
    const [faithful, any, encodedName] = encodingsOf(draw.encodings, index);
    const encoding = role === 'clean' ? faithful : any;
    pairs.push({ name, value: value.text, encoding, encodedName });
    const kept = encoding === 'component' || encoding === 'loose' || encoding === 'plus';
    verdicts.push(kept ? value.verdict : 'unknown');
  };
  names.forEach((name, i) => {
    const spec = parameters[name] as Parameter;
    const role = roleOf(mix, first + i, count);
    const drawn = draw.present[i];
    if (drawn === undefined) return;
    // A required parameter left out (by a bad or chaos part): a refusal.
    const omitted =
      spec.required && ((role === 'bad' && drawn.roll % 4 === 0) || (role === 'chaos' && drawn.roll % 30 === 0));
    if (omitted) {
      verdicts.push('invalid');
      return;
    }
    add(name, pick(drawn, role), role, i);
  });
  if (draw.range) {
    const role = roleOf(mix, first + names.length, count);
    const verdict = kindOf(draw.range, role);
    const range = draw.range[verdict];
    if (range.since !== undefined) add('since', { text: range.since, verdict }, role, names.length);
    if (range.until !== undefined) add('until', { text: range.until, verdict }, role, names.length + 1);
  }
  let duplicated = false;
  if (draw.repeat && mix.mode !== 'clean' && pairs.length > 0 && draw.repeat[0] % 5 === 0) {
    // The same pair again (`since=2024-01-01&since=2024-01-01`), or the name with another value.
    const [which, text] = draw.repeat;
    const again = pairs[which % pairs.length] as Pair;
    pairs.push(which % 2 === 0 ? { ...again } : { ...again, value: text, encoding: 'component' });
    duplicated = true;
  }
  pairs.push(...(mix.mode === 'clean' ? draw.extras.filter((pair) => pair.encoding !== 'raw') : draw.extras));
  if (mix.mode !== 'clean' && draw.extras.some((pair) => pair.encoding === 'raw')) verdicts.push('unknown');
  return { pairs, verdict: worst(...verdicts), duplicated };
}

/** Roles a query takes: one per parameter, plus one for the date range. */
export function queryRoles(parameters: Record<string, Parameter>, dates: boolean): number {
  return Object.keys(parameters).length + (dates ? 1 : 0);
}

// ---------------------------------------------------------------------------------------------
// Authentication.

export type AuthKind = 'ok' | 'no-raster' | 'bad';

interface Auth {
  kind: AuthKind;
  pairs: readonly Pair[];
  headers: Readonly<Record<string, string>>;
}

function keyPair(value: string | undefined, encodedName = false): Pair {
  return { name: 'apikey', value, encoding: 'component', encodedName };
}

/** A valid key, in the query (name encoded or not) or in the header, or both. */
function goodAuth(world: World): fc.Arbitrary<Auth> {
  const scheme = fc.constantFrom('Apikey', 'apikey', 'APIKEY', 'ApiKey');
  return fc.oneof(
    {
      weight: 10,
      arbitrary: fc.nat(4).map((n): Auth => ({ kind: 'ok', pairs: [keyPair(world.key, n === 0)], headers: {} })),
    },
    {
      weight: 3,
      arbitrary: scheme.map((s): Auth => ({ kind: 'ok', pairs: [], headers: { authorization: `${s} ${world.key}` } })),
    },
    {
      // An empty apikey in the query is no key: the header's is used.
      weight: 1,
      arbitrary: fc.constant<Auth>({
        kind: 'ok',
        pairs: [keyPair(undefined)],
        headers: { authorization: `Apikey ${world.key}` },
      }),
    },
    {
      // Both: the query's wins.
      weight: 1,
      arbitrary: hostileText().map(
        (h): Auth => ({ kind: 'ok', pairs: [keyPair(world.key)], headers: { authorization: `Apikey ${sendable(h)}` } }),
      ),
    },
  );
}

/** No key, a key that is not (or no longer) valid, or one without the raster subscription. */
function badAuth(world: World): fc.Arbitrary<Auth> {
  const mangled = fc.tuple(fc.nat(), fc.constantFrom('x', '0', '_', '')).map(([at, c]) => {
    const i = at % world.key.length;
    const changed = `${world.key.slice(0, i)}${c}${world.key.slice(i + 1)}`;
    return changed === world.key ? `${world.key}x` : changed;
  });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant<Auth>({ kind: 'no-raster', pairs: [keyPair(world.plainKey)], headers: {} }) },
    { weight: 1, arbitrary: fc.constant<Auth>({ kind: 'bad', pairs: [], headers: {} }) },
    {
      weight: 4,
      arbitrary: fc
        .oneof(
          fc.constantFrom(world.revokedKey, world.disabledKey, `${world.key} `, world.key.toUpperCase()),
          mangled,
          hostileText().filter((t) => t.trim() !== ''),
        )
        .map((k): Auth => ({ kind: 'bad', pairs: [keyPair(k)], headers: {} })),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          `Bearer ${world.key}`,
          'Apikey',
          `Basic ${world.key}`,
          `Apikey ${world.key} extra`,
          `Apikey${world.key}`,
        )
        .map((h): Auth => ({ kind: 'bad', pairs: [], headers: { authorization: h } })),
    },
  );
}

export function authChoice(world: World): fc.Arbitrary<{ good: Auth; bad: Auth; roll: number }> {
  return fc.record({ good: goodAuth(world), bad: badAuth(world), roll: fc.nat() });
}

export function pickAuth(a: { good: Auth; bad: Auth; roll: number }, role: Role): Auth {
  if (role === 'clean') return a.good;
  if (role === 'bad') return a.bad;
  return a.roll % 3 === 0 ? a.bad : a.good;
}

/** A header value node:http will send: visible Latin-1 only. */
export function sendable(text: string): string {
  return text.replace(/[^\x20-\x7e\x80-\xff]/g, '?').trim();
}

// ---------------------------------------------------------------------------------------------
// Methods, headers, bodies.

const OTHER_METHODS = ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND'];

export const method = fc.oneof(
  { weight: 40, arbitrary: fc.constant('GET') },
  { weight: 3, arbitrary: fc.constant('HEAD') },
  { weight: 5, arbitrary: fc.constantFrom(...OTHER_METHODS) },
);

const CONTENT_TYPES = [
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'foo/bar',
  'application/json; charset=utf-16',
];

interface Extras {
  headers: Record<string, string>;
  body?: string;
}

/** Headers anyone may send, and a body some requests carry: drawn whatever the method. */
export const EXTRAS = fc.record({
  requestId: sometimes(fc.oneof(hostileText().map(sendable), fc.uuid()), 0.2),
  accept: sometimes(fc.constantFrom('*/*', 'text/html', 'application/xml', 'image/webp'), 0.2),
  body: fc.oneof(
    hostileText(),
    fc.constantFrom('{}', '{"a":1}', '[', 'null', '{"point":"10,45"}', '<x/>', 'a=1&b=2'),
    fc.nat({ max: 6000 }).map((n) => 'b'.repeat(n)),
  ),
  type: fc.constantFrom(...CONTENT_TYPES),
  roll: fc.nat(),
});
type ExtrasDraw = typeof EXTRAS extends fc.Arbitrary<infer T> ? T : never;

/**
 * The headers and body a request of method `m` sends: a body on most other methods, on a few GETs
 * (RFC 9110 gives it no meaning: sent anyway, it must change nothing), never on a HEAD.
 */
export function extrasFor(d: ExtrasDraw, m: string): Extras {
  const headers: Record<string, string> = {};
  if (d.requestId !== undefined) headers['x-request-id'] = d.requestId;
  if (d.accept !== undefined) headers.accept = d.accept;
  const withBody = m === 'HEAD' ? false : m === 'GET' ? d.roll % 100 < 8 : d.roll % 10 < 7;
  if (!withBody) return { headers };
  headers['content-type'] = d.type;
  return { headers, body: d.body };
}

/** The router refuses a path segment over 512 characters before any other check (a 400 BAD_REQUEST). */
function hasLongSegment(path: string): boolean {
  return path.split('/').some((segment) => segment.length > 512);
}

/**
 * The documented answer to a method: GET and HEAD run the endpoint; the rest do not (405 on a
 * route, a preflight's 204). `routed`: whether the path is surely a route (else 404 or 405, or a
 * 400 for a path that does not decode).
 */
export function methodAnswer(m: string, routed = true): Expectation | undefined {
  if (m === 'GET' || m === 'HEAD') return undefined;
  // A path that may not be a route, or not even decode (`/%/`: a 400 before any method check).
  if (!routed) return m === 'OPTIONS' ? { statuses: [204, 400, 404] } : { statuses: [400, 404, 405] };
  if (m === 'OPTIONS') return { statuses: [204] };
  return { statuses: [405], code: 'METHOD_NOT_ALLOWED' };
}

// ---------------------------------------------------------------------------------------------
// Coverage.

const COVERAGE_PARAMETERS: Record<string, Parameter> = {
  point: { values: point, required: true },
  radius: { values: radius(), required: true },
  resources: { values: resources, required: true },
  filter: { values: enumValue(['allTypes', 'anyTypes'], ['all', 'AllTypes', 'anytypes']) },
  overlap: { values: enumValue(['full', 'partial'], ['none', 'FULL', 'Partial']) },
  fields: { values: fields },
  limit: { values: integerIn(1, 1000, ['0', '1001', '1.5', '-1', '', '1e400']) },
  offset: { values: integerIn(0, Number.MAX_SAFE_INTEGER, ['-1', '9007199254740992', '1.5', '1e300', '']) },
};

export function coverageCase(world: World): fc.Arbitrary<ApiCase> {
  const roles = queryRoles(COVERAGE_PARAMETERS, true) + 1;
  return fc
    .record({
      m: method,
      mix: MIX,
      draw: queryDraw(COVERAGE_PARAMETERS, true),
      auth: authChoice(world),
      ex: EXTRAS,
      order: fc.nat(),
      path: fc.oneof(
        { weight: 30, arbitrary: fc.constant('/staticmap/v2/coverage.json') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            '/staticmap/v2/coverage.JSON',
            '/staticmap/v2/coverage.json/',
            '/staticmap/v2/%63overage.json',
            '/staticmap/v2//coverage.json',
          ),
        },
      ),
      http: fc.boolean(),
    })
    .map(({ m, mix, draw, auth, ex, order, path, http }): ApiCase => {
      const e = extrasFor(ex, m);
      const q = buildQuery(COVERAGE_PARAMETERS, draw, mix, 0, roles);
      const a = pickAuth(auth, roleOf(mix, roles - 1, roles));
      const official = path === '/staticmap/v2/coverage.json' || path === '/staticmap/v2/%63overage.json';
      let expect = official ? methodAnswer(m) : undefined;
      if (official && !expect) {
        // Order of checks: repeated parameters (the server-wide hook), the key, the
        // subscription, then the values (coverage-route.ts; docs/api.md "Authentication").
        if (q.duplicated) expect = { statuses: [400], code: 'INVALID_PARAMETER' };
        else if (a.kind === 'bad') expect = { statuses: [401], code: 'API_KEY_INVALID' };
        else if (a.kind === 'no-raster') expect = { statuses: [403], code: 'SUBSCRIPTION_REQUIRED' };
        else if (q.verdict === 'invalid') expect = { statuses: [400], code: 'INVALID_PARAMETER' };
        else if (q.verdict === 'valid') expect = { statuses: [200] };
      }
      return {
        endpoint: official ? 'coverage' : 'other',
        method: m,
        path,
        pairs: [...a.pairs, ...q.pairs],
        order,
        headers: { ...e.headers, ...a.headers },
        body: e.body,
        http,
        valid: official && m === 'GET' && a.kind === 'ok' && q.verdict === 'valid' && !q.duplicated,
        types: ['application/json'],
        expect,
      };
    });
}

// ---------------------------------------------------------------------------------------------
// Imagery.

interface SurveyRef {
  id: string;
  encoded: string;
  known?: World['surveys'][number];
}

/** A survey id: one of the world's (valid), a well-formed unknown one (refused: 404), or anything. */
function surveyChoice(world: World): fc.Arbitrary<Choice<SurveyRef>> {
  return choice<SurveyRef>(
    fc.constantFrom(...world.surveys).map((s) => ({ id: s.id, encoded: s.id, known: s })),
    fc.oneof(
      fc.uuid().map((id) => ({ id, encoded: id })),
      fc.constant({ id: world.unknownSurvey, encoded: world.unknownSurvey.toUpperCase() }),
    ),
    fc.tuple(hostileText(), ENCODING).map(([text, encoding]) => ({
      id: text,
      encoded: encode(text, encoding === 'plus' ? 'component' : encoding) || '%20',
    })),
    [8, 1, 2],
  );
}

/** Large sizes are sent only where no render follows. */
const LARGE_SIZES = ['5000x5000', '4999x4999', '2048x2048'];

type TokenKind = 'ok' | 'far' | 'bad';

interface Token {
  text: string;
  kind: TokenKind;
}

/** The centre token, the far token (valid), tokens refused for what they are, or anything. */
function tokenChoice(world: World): fc.Arbitrary<Choice<Token>> {
  const tampered = fc.tuple(fc.nat(), fc.constantFrom('A', 'b', '-', '_', '0', '.', '')).map(([at, c]) => {
    const i = at % world.token.length;
    const changed = `${world.token.slice(0, i)}${c}${world.token.slice(i + 1)}`;
    return changed === world.token ? `${world.token}A` : changed;
  });
  return choice<Token>(
    fc.oneof(
      { weight: 6, arbitrary: fc.constant<Token>({ text: world.token, kind: 'ok' }) },
      { weight: 1, arbitrary: fc.constant<Token>({ text: world.farToken, kind: 'far' }) },
    ),
    fc
      .oneof(
        fc.constantFrom(world.expiredToken, world.revokedToken, `${world.token}.x`, world.token.slice(0, -4), ''),
        tampered,
      )
      .map((text): Token => ({ text, kind: 'bad' })),
    hostileText().map((text): Token => ({ text, kind: 'bad' })),
  );
}

/** Whether a point spells the world's centre (within the 1e-7 degrees a token allows). */
function nearCentre(text: string, world: World): boolean {
  const [lon, lat] = text.split(',').map(Number);
  return Math.abs((lon ?? 0) - world.centre.lon) < 1e-6 && Math.abs((lat ?? 0) - world.centre.lat) < 1e-6;
}

function centreSpellings(world: World): string[] {
  const { lon, lat } = world.centre;
  return [
    lonLat(lon, lat),
    `${lon.toFixed(1)},${lat.toFixed(3)}`,
    `${lon + 5e-8},${lat}`,
    `${lon.toExponential()},${lat.toExponential()}`,
    ` ${lon} , ${lat} `,
  ];
}

function imageryPath(surveyPath: string, type: string, format: string): string {
  return `/staticmap/v2/surveys/${surveyPath}/${encode(type, 'component')}.${encode(format, 'component')}`;
}

/**
 * Imagery requests that never reach the renderer (a render costs tens of milliseconds): where
 * a case would render, its size is made a refused one.
 *
 * Parts, by role index: survey, type, format, token, point, radius, size.
 */
export function imageryCase(world: World): fc.Arbitrary<ApiCase> {
  const ROLES = 7;
  return fc
    .record({
      verb: method,
      mix: MIX,
      survey: surveyChoice(world),
      type: values(
        fc.constantFrom(...RASTER_TYPES),
        fc.constantFrom('vert', 'North', 'Panorama', '', 'TRUEORTHO', 'Vert.tif'),
        [8, 2, 1],
      ),
      format: values(
        fc.constantFrom(...RASTER_FORMATS),
        fc.constantFrom('TIF', 'tiff', 'jpeg', 'gif', '', 'tif.png', 'jpg ', 'JGW'),
        [8, 2, 1],
      ),
      token: tokenChoice(world),
      // The token's point in several spellings (or the far token's), or another valid one (a
      // mismatch: 403), or refused ones.
      where: choice(
        fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...centreSpellings(world)).map((text) => ({ text, at: 'token' })) },
          {
            weight: 1,
            arbitrary: anyPoint.filter((text) => !nearCentre(text, world)).map((text) => ({ text, at: 'elsewhere' })),
          },
        ),
        fc.constantFrom(...BAD_POINTS).map((text) => ({ text, at: 'refused' })),
        hostileText().map((text) => ({ text, at: 'hostile' })),
      ),
      // Radii within both tokens' (farRadius is the smaller), or up to 100 (a mismatch over it).
      r: fc.record({ near: radius(world.farRadius), anywhere: radius(), wide: fc.boolean() }),
      size: values(
        fc.oneof(
          { weight: 8, arbitrary: fc.integer({ min: 1, max: 12 }).map((n) => `${n}x${n}`) },
          { weight: 1, arbitrary: fc.constantFrom(...LARGE_SIZES) },
        ),
        fc.constantFrom('5001x5001', '0x0', '01x01', '10x11', '10X10', ' 10x10', '1e1x1e1', '10', '', '９x９'),
      ),
      encodings: fc.nat(),
      extraPairs: fc.oneof({ weight: 4, arbitrary: extraPairs }, { weight: 1, arbitrary: hostileExtraPairs }),
      ex: EXTRAS,
      order: fc.nat(),
      repeat: fc.nat(),
      http: fc.boolean(),
    })
    .map((g): ApiCase => {
      const { verb } = g;
      const e = extrasFor(g.ex, verb);
      const role = (index: number) => roleOf(g.mix, index, ROLES);
      const surveyKind = kindOf(g.survey, role(0));
      const survey = g.survey[surveyKind];
      const type = pick(g.type, role(1));
      const format = pick(g.format, role(2));
      const tokenKind = kindOf(g.token, role(3));
      const token = g.token[tokenKind];
      const whereKind = kindOf(g.where, role(4));
      const where = g.where[whereKind];
      const radiusChoice = g.r.wide && role(5) !== 'clean' ? g.r.anywhere : g.r.near;
      const r = pick(radiusChoice, role(5));
      // Within the token's radius (the far token's is the smaller; the near radii fit both).
      const tokenRadius = token.kind === 'far' ? world.farRadius : world.tokenRadius;
      const within = r.verdict === 'valid' && (radiusChoice === g.r.near || Number(r.text) <= tokenRadius);
      let sizePart = pick(g.size, role(6));
      const declared: [string, Part][] = [
        [
          'transactionToken',
          {
            text: token.text,
            verdict: tokenKind === 'unknown' ? 'unknown' : token.text === '' ? 'invalid' : 'valid',
          },
        ],
        ['point', { text: where.text, verdict: whereKind }],
        ['radius', r],
        ['size', sizePart],
      ];
      const aoiMatches =
        where.at === 'token'
          ? token.kind === 'ok'
          : token.kind === 'far' && where.text === lonLat(world.far.lon, world.far.lat);
      const tokenOk = token.kind !== 'bad' && whereKind === 'valid' && aoiMatches && within;
      const known = surveyKind === 'valid' ? survey.known : undefined;
      const hasType = known !== undefined && type.verdict === 'valid' && known.raster.includes(type.text);
      const paramsVerdict = () => worst(type.verdict, format.verdict, ...declared.map(([, p]) => p.verdict));
      const duplicated = g.mix.mode !== 'clean' && g.repeat % 8 === 0;
      if (paramsVerdict() === 'valid' && tokenOk && hasType && !duplicated) {
        sizePart = invalid('0x0');
        declared[3] = ['size', sizePart];
      }
      const pairs: Pair[] = declared.map(([name, p], i) => {
        const [faithful, any] = encodingsOf(g.encodings, i);
        const encoding = role(3 + i) === 'clean' ? faithful : any;
        if (encoding === 'raw' || encoding === 'double') p.verdict = p.verdict === 'valid' ? 'unknown' : p.verdict;
        return { name, value: p.text, encoding, encodedName: false };
      });
      if (duplicated) pairs.push({ ...(pairs[g.repeat % pairs.length] as Pair), encoding: 'component' });
      pairs.push(...(g.mix.mode === 'clean' ? g.extraPairs.filter((pair) => pair.encoding !== 'raw') : g.extraPairs));
      const verdict = paramsVerdict();
      const path = imageryPath(survey.encoded, type.text, format.text);
      let expect = methodAnswer(verb, surveyKind !== 'unknown' && !hasLongSegment(path));
      if (!expect && surveyKind !== 'unknown' && !hasLongSegment(path)) {
        // Order: the parameters, the token for this AOI, the survey and its type (docs/api.md).
        if (duplicated || verdict === 'invalid') expect = { statuses: [400], code: 'INVALID_PARAMETER' };
        else if (verdict === 'valid') {
          if (!tokenOk) expect = { statuses: [403], code: 'TRANSACTION_TOKEN_INVALID' };
          else if (!known) expect = { statuses: [404], code: 'SURVEY_NOT_FOUND' };
          else if (!hasType) expect = { statuses: [404], code: 'CONTENT_NOT_FOUND' };
        }
      }
      return {
        endpoint: 'imagery',
        method: verb,
        path,
        pairs,
        order: g.order,
        headers: e.headers,
        body: e.body,
        http: g.http,
        valid: false,
        types: CONTENT_TYPE_OF_FORMAT[format.text] ?? [],
        expect,
      };
    });
}

/**
 * Imagery requests that render: every part valid, in its several spellings and encodings, with
 * extra parameters; small sizes only. At the far token's AOI (no survey there) the picture is
 * empty: 200, or the 404 issue 18 asks for instead of billing an empty image.
 */
export function imageryRenderCase(world: World): fc.Arbitrary<ApiCase> {
  const survey = fc
    .constantFrom(...world.surveys)
    .chain((s) => fc.constantFrom(...s.raster).map((type) => ({ id: s.id, type })));
  return fc
    .record({
      survey,
      format: fc.constantFrom(...RASTER_FORMATS),
      far: sometimes(fc.constant(true), 0.15),
      centre: fc.constantFrom(...centreSpellings(world)),
      r: fc.oneof(decimal(1, world.farRadius), fc.constantFrom('1', String(world.farRadius))),
      side: fc.integer({ min: 1, max: 8 }),
      encodings: fc.nat(),
      extraPairs,
      order: fc.nat(),
      http: fc.boolean(),
      headers: EXTRAS.map((d) => extrasFor(d, 'HEAD').headers),
    })
    .map((g): ApiCase => {
      const far = g.far === true;
      const values: [string, string][] = [
        ['transactionToken', far ? world.farToken : world.token],
        ['point', far ? lonLat(world.far.lon, world.far.lat) : g.centre],
        ['radius', g.r],
        ['size', `${g.side}x${g.side}`],
      ];
      const pairs: Pair[] = values.map(([name, value], i) => ({
        name,
        value,
        encoding: encodingsOf(g.encodings, i)[0],
        encodedName: false,
      }));
      return {
        endpoint: 'imagery',
        method: 'GET',
        path: imageryPath(g.survey.id, g.survey.type, g.format),
        pairs: [...pairs, ...g.extraPairs],
        order: g.order,
        headers: g.headers,
        http: g.http,
        valid: true,
        types: CONTENT_TYPE_OF_FORMAT[g.format] ?? [],
        expect: far ? { statuses: [200, 404], code: 'NO_IMAGERY' } : { statuses: [200] },
      };
    });
}

// ---------------------------------------------------------------------------------------------
// Tiles.

interface Address {
  z: string;
  x: string;
  y: string;
}

/** Tile addresses near the surveys or anywhere (valid), out of range (refused), or anything. */
function addressChoice(world: World): fc.Arbitrary<Choice<Address>> {
  /** A tile of `range`, `ring` tiles around it included. */
  const within = (range: World['tileRanges'][number], ring: number) => {
    const last = 2 ** range.z - 1;
    return fc
      .tuple(
        fc.integer({ min: Math.max(0, range.x0 - ring), max: Math.min(last, range.x1 + ring) }),
        fc.integer({ min: Math.max(0, range.y0 - ring), max: Math.min(last, range.y1 + ring) }),
      )
      .map(([x, y]) => ({ z: String(range.z), x: String(x), y: String(y) }));
  };
  const served = world.tileRanges.filter((range) => range.served);
  // Mostly tiles the surveys draw into, some around them and at the zooms just beyond theirs.
  const near = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...served).chain((range) => within(range, 0)) },
    { weight: 1, arbitrary: fc.constantFrom(...world.tileRanges).chain((range) => within(range, 1)) },
  );
  const anywhere = fc
    .integer({ min: 0, max: 24 })
    .chain((z) =>
      fc
        .tuple(fc.integer({ min: 0, max: 2 ** z - 1 }), fc.integer({ min: 0, max: 2 ** z - 1 }))
        .map(([x, y]) => ({ z: String(z), x: String(x), y: String(y) })),
    );
  const edges = fc.constantFrom(
    { z: '0', x: '0', y: '0' },
    { z: '24', x: String(2 ** 24 - 1), y: String(2 ** 24 - 1) },
    { z: '1', x: '1', y: '1' },
  );
  const outOfRange = fc.oneof(
    fc.integer({ min: 0, max: 24 }).map((z) => ({ z: String(z), x: String(2 ** z), y: '0' })),
    fc.integer({ min: 0, max: 24 }).map((z) => ({ z: String(z), x: '0', y: String(2 ** z) })),
    fc
      .constantFrom('25', '-1', '+1', '1.0', '1e1', 'x', '', ' 1', '4294967296', '١')
      .map((z) => ({ z, x: '0', y: '0' })),
    fc.constantFrom('-1', '+0', '0.0', '0x0', 'NaN', '').map((x) => ({ z: '3', x, y: '0' })),
  );
  const hostile = fc
    .tuple(
      fc.oneof(hostileText(), numberText()),
      fc.oneof(hostileText(), numberText()),
      fc.oneof(hostileText(), numberText()),
    )
    .map(([z, x, y]) => ({ z, x, y }));
  return choice<Address>(
    fc.oneof({ weight: 10, arbitrary: near }, { weight: 2, arbitrary: anywhere }, { weight: 1, arbitrary: edges }),
    outOfRange,
    hostile,
  );
}

/** Filters are sent less often than on coverage: a filtered tile is mostly a 404. */
const TILE_QUERY: Record<string, Parameter> = {
  include: { values: tags, presence: 0.2 },
  exclude: { values: tags, presence: 0.2 },
  mosaic: { values: enumValue(['latest', 'earliest'], ['Latest', 'newest', 'oldest']), presence: 0.3 },
};
const SURVEY_TILE_QUERY: Record<string, Parameter> = {
  include: { values: tags, presence: 0.2 },
  exclude: { values: tags, presence: 0.2 },
};

/**
 * Location tiles or survey tiles. Parts, by role index: survey, layer, address, format, the key,
 * then the query's.
 */
export function tileCase(world: World): fc.Arbitrary<ApiCase> {
  return fc.oneof(tileCaseOf(world, false), tileCaseOf(world, true));
}

function tileCaseOf(world: World, bySurvey: boolean): fc.Arbitrary<ApiCase> {
  const parameters = bySurvey ? SURVEY_TILE_QUERY : TILE_QUERY;
  const roles = 5 + queryRoles(parameters, true);
  return fc
    .record({
      verb: method,
      mix: MIX,
      survey: surveyChoice(world),
      type: values(
        fc.constantFrom(...TILE_TYPES),
        fc.constantFrom('vert', 'DetailDsm', 'TRUEORTHO', 'Panorama', 'NORTH', ''),
        [8, 2, 1],
      ),
      address: addressChoice(world),
      format: values(
        fc.constantFrom(...TILE_FORMATS),
        fc.constantFrom('JPG', 'jpeg', 'gif', 'webp', '', 'png ', 'IMG'),
        [8, 2, 1],
      ),
      draw: queryDraw(parameters, true, 0.3),
      auth: authChoice(world),
      ifNoneMatch: sometimes(fc.constantFrom('*', world.etag, '"nope"', 'W/"x"', world.etag.replace(/.$/, 'x"')), 0.12),
      ex: EXTRAS,
      order: fc.nat(),
    })
    .map((g): ApiCase => {
      const { verb } = g;
      const e = extrasFor(g.ex, verb);
      const role = (index: number) => roleOf(g.mix, index, roles);
      // The survey endpoint has no survey role to spend in the location case, and the other way round.
      const surveyKind = bySurvey ? kindOf(g.survey, role(0)) : 'valid';
      const survey = g.survey[surveyKind];
      const type = pick(g.type, role(1));
      const addressKind = kindOf(g.address, role(2));
      const { z, x, y } = g.address[addressKind];
      const format = pick(g.format, role(3));
      const a = pickAuth(g.auth, role(4));
      const q = buildQuery(parameters, g.draw, g.mix, 5, roles);
      const file = `${encode(y, 'component')}.${encode(format.text, 'component')}`;
      const prefix = bySurvey ? `/tiles/v3/surveys/${survey.encoded}` : '/tiles/v3';
      const segments = [type.text, z, x].map((text) => encode(text, 'component'));
      const path = `${prefix}/${segments.join('/')}/${file}`;
      const pathVerdict = worst(type.verdict, addressKind, format.verdict);
      const verdict = worst(pathVerdict, q.verdict);
      const headers = { ...e.headers, ...a.headers };
      if (g.ifNoneMatch) headers['if-none-match'] = g.ifNoneMatch;
      const routed = !hasLongSegment(path) && surveyKind !== 'unknown';
      let expect = methodAnswer(verb, routed);
      // A key that is no key gets a 401 first; one without the raster subscription is fine here.
      const keyBad = a.kind === 'bad';
      if (!expect && routed) {
        // Order: the key, the rate limit, the parameters, the survey and its layer, the tile.
        if (keyBad) expect = { statuses: [401], code: 'API_KEY_INVALID' };
        else if (q.duplicated || verdict === 'invalid') expect = { statuses: [400], code: 'INVALID_PARAMETER' };
        else if (verdict === 'valid') {
          const known = surveyKind === 'valid' ? survey.known : undefined;
          if (bySurvey && !known) expect = { statuses: [404], code: 'SURVEY_NOT_FOUND' };
          else if (bySurvey && !known?.tiles.includes(type.text)) {
            expect = { statuses: [404], code: 'CONTENT_NOT_FOUND' };
          } else expect = { statuses: [200, 304, 404], code: 'NO_IMAGERY' };
        }
      }
      return {
        endpoint: bySurvey ? 'survey-tile' : 'location-tile',
        method: verb,
        path,
        pairs: [...a.pairs, ...q.pairs],
        order: g.order,
        headers,
        body: e.body,
        // Tiles go over HTTP, where the tile lane answers first; fastify's inject is the comparison.
        http: true,
        valid: !keyBad && !q.duplicated && verdict === 'valid' && verb === 'GET' && routed,
        types: CONTENT_TYPE_OF_FORMAT[format.text] ?? [],
        expect,
      };
    });
}

// ---------------------------------------------------------------------------------------------
// Everything else: operations, docs, the map page, and paths that lead nowhere.

/** [path, content type of its 200]: every other route fastify has (server.ts, openapi.ts, map-page). */
export const FIXED_ROUTES: ReadonlyArray<[string, string]> = [
  ['/health', 'application/json'],
  ['/ready', 'application/json'],
  ['/version', 'application/json'],
  ['/openapi.json', 'application/json'],
  ['/docs', 'text/html'],
  ['/docs/', 'text/html'],
  ['/docs/json', 'application/json'],
  ['/docs/yaml', 'application/x-yaml'],
  ['/docs/static/swagger-initializer.js', 'application/javascript'],
  ['/docs/static/swagger-ui.css', 'text/css'],
  ['/', 'text/html'],
  ['/map/map.js', 'text/javascript'],
  ['/map/map.css', 'text/css'],
  ['/map/change-layer.js', 'text/javascript'],
  ['/map/change-layer.css', 'text/css'],
  ['/map/grids.js', 'text/javascript'],
  ['/map/coverage-view.js', 'text/javascript'],
  ['/map/tile-layers.js', 'text/javascript'],
  ['/map/swipe.js', 'text/javascript'],
  ['/map/area-download.js', 'text/javascript'],
  ['/map/timeline.js', 'text/javascript'],
  ['/map/terrain.js', 'text/javascript'],
  ['/map/terrain.css', 'text/css'],
  ['/map/terrain.html', 'text/html'],
  ['/map/maplibre/maplibre-gl.mjs', 'text/javascript'],
  ['/map/maplibre/maplibre-gl-shared.mjs', 'text/javascript'],
  ['/map/maplibre/maplibre-gl-worker.mjs', 'text/javascript'],
  ['/map/maplibre/maplibre-gl.css', 'text/css'],
  // @nadir/client's browser entry as the page serves it (the files its dist/index.js reaches).
  ...(await browserClientFiles()).map((name): [string, string] => [`/map/client/${name}`, 'text/javascript']),
  ['/map/leaflet/leaflet.js', 'text/javascript'],
  ['/map/leaflet/leaflet.css', 'text/css'],
  ['/map/leaflet/images/layers.png', 'image/png'],
  ['/map/leaflet/images/layers-2x.png', 'image/png'],
  ['/map/leaflet/images/marker-icon.png', 'image/png'],
  ['/map/leaflet/images/marker-icon-2x.png', 'image/png'],
  ['/map/leaflet/images/marker-shadow.png', 'image/png'],
  // The STAC queryables describe the API, as /openapi.json does: no key needed (stac-route.ts).
  ['/stac/v1/queryables', 'application/schema+json'],
];

const PREFIXES = [
  '',
  '/tiles/v3',
  '/tiles/v3/surveys',
  '/staticmap/v2',
  '/staticmap/v2/surveys',
  '/docs/static',
  '/docs',
  '/map',
  '/map/leaflet',
  '/map/client',
];
const TRAVERSALS = [
  '/docs/static/..%2F..%2F..%2Fpackage.json',
  '/docs/static/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd',
  '/docs/static/%2e%2e/%2e%2e/package.json',
  '/docs/static/....//....//package.json',
  '/docs/static/..%5c..%5cpackage.json',
  '/map/..%2F..%2Fpackage.json',
  '/map/leaflet/..%2F..%2F..%2Fpackage.json',
  '/docs/static/%252e%252e%252fpackage.json',
  '/docs/static/..%00/package.json',
  '/docs/static/swagger-ui.css%00.html',
  '/health%00',
  '/health;x=1',
  '/HEALTH',
  '/health/',
  '//health',
  '/./health',
  '/%2e/health',
  '/docs/static/',
  '/docs/static/index.html',
];

export function otherCase(): fc.Arbitrary<ApiCase> {
  const fixed = fc.constantFrom(...FIXED_ROUTES).map(([path, type]) => ({ path, types: [type], fixed: true }));
  const wandering = fc
    .tuple(fc.constantFrom(...PREFIXES), fc.array(fc.tuple(hostileText(), ENCODING), { minLength: 1, maxLength: 4 }))
    .map(([prefix, segments]) => ({
      path: `${prefix}/${segments.map(([text, enc]) => encode(text, enc === 'plus' ? 'component' : enc)).join('/')}`,
      types: [] as string[],
      fixed: false,
    }));
  const traversal = fc.constantFrom(...TRAVERSALS).map((path) => ({ path, types: [] as string[], fixed: false }));
  return fc
    .record({
      verb: method,
      target: fc.oneof(
        { weight: 4, arbitrary: fixed },
        { weight: 3, arbitrary: wandering },
        { weight: 2, arbitrary: traversal },
      ),
      pairs: fc.oneof(extraPairs, hostileExtraPairs),
      ex: EXTRAS,
      order: fc.nat(),
      http: fc.boolean(),
    })
    .map(({ verb, target, pairs, ex, order, http }): ApiCase => {
      const e = extrasFor(ex, verb);
      let expect = methodAnswer(verb, target.fixed);
      // Readiness is answered 200 here: the test's stores are up.
      if (!expect && target.fixed) expect = { statuses: [200] };
      return {
        endpoint: target.fixed ? 'system' : 'other',
        method: verb,
        path: target.path,
        pairs,
        order,
        headers: e.headers,
        body: e.body,
        http,
        valid: target.fixed && verb === 'GET',
        types: target.types,
        expect,
      };
    });
}
