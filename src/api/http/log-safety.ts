import { type Logger, pino } from 'pino';
import { RASTER_TYPES, TILE_TYPES } from '../../catalogue/survey.js';
import type { Config } from '../../config/config.js';
import { SURVEY_FIELDS } from '../../coverage/coverage-request.js';
import { parseDateOrRelative } from '../../geo/dates.js';
import { parseDecimal } from '../../geo/point-text.js';
import { RASTER_FORMATS } from '../../raster/formats.js';

/**
 * Keeps credentials out of the logs (issue 18). API keys and transaction tokens travel in query
 * strings (the spec's choice), and a client may put one anywhere: under another parameter name,
 * percent-encoded, in the path, cut short, base64-encoded. Recognising them in all those forms
 * cannot be done reliably, so the rule is the other way round: a URL is logged with only what is
 * known to be safe, and everything else is replaced by `[REDACTED]`.
 *
 * - Path: each segment is kept when it is a word of our own routes (`staticmap`, `coverage.json`,
 *   `Vert`, `TrueOrtho.tif`, ...), a survey id (a UUID), or a tile number (`19`, `301234.jpg`).
 * - Query: the values of the parameters the API declares are kept only when they parse as their
 *   type (`radius=50`, `point=10,50`, `since=2024-01-01`, `resources=Vert,TrueOrtho`); `apikey`,
 *   `transactionToken`, and every value of any other parameter, are redacted. A parameter name is
 *   kept when it is a declared one or short (at most 10 characters of `A-Z a-z 0-9 _ . -`, so
 *   `APIKEY` and `foo` stay readable).
 *
 * Why that holds whatever the client sends: a key is `nadir_` + 12 hex + `_` + 43 base64url
 * characters, a token `t1.<id>.` + a base64url body of about 150. Everything kept is either ours,
 * or made of pieces shorter than 12 characters between separators no key, token or base64 text
 * contains (`/` `?` `&` `=` `,` `:` `.`), or a UUID / a decimal number (hex digits and dashes, or
 * digits only, which a base64url secret holds 12 of in a row with a probability of about 1e-6).
 * So no 12-character piece of a key or token, nor 16 characters of base64 of one, can survive.
 * The only piece of a key that is not secret is its id (12 hex characters, shown by `nadir
 * accounts keys`); a UUID or a decimal number could carry it, and nothing else.
 *
 * Headers are never logged; any header object that does reach a log line is reduced the same way
 * (names kept when safe, values redacted). Error messages and stacks, which never hold request
 * input by design, are scrubbed of anything shaped like a key or a token as a second belt.
 */

export const REDACTED = '[REDACTED]';
/** Longer logged URLs are cut (a 64 KB URL would otherwise make a 64 KB log line). */
const MAX_LOGGED_URL = 2048;

/** Words of our own routes (apart from those the lists below give). */
const ROUTE_WORDS = [
  'staticmap',
  'v2',
  'v3',
  'coverage.json',
  'surveys',
  'tiles',
  'health',
  'ready',
  'version',
  'openapi.json',
  'docs',
  'static',
  'json',
  'yaml',
  'map',
  'map.js',
  'map.css',
  'change-layer.js',
  'change-layer.css',
  'leaflet',
  'leaflet.js',
  'leaflet.css',
  'images',
  'favicon.ico',
  'index.html',
  // The GIS endpoints (api/gis/).
  'stac',
  'v1',
  'conformance',
  'collections',
  'items',
  'search',
  'tilejson.json',
  'wmts',
  '1.0.0',
  'WMTSCapabilities.xml',
  'default',
  'current',
  'GoogleMapsCompatible',
];
const SAFE_SEGMENTS: ReadonlySet<string> = new Set([
  ...ROUTE_WORDS,
  ...TILE_TYPES,
  ...RASTER_TYPES,
  ...RASTER_TYPES.flatMap((type) => RASTER_FORMATS.map((format) => `${type}.${format}`)),
  'DsmChange',
  ...[...RASTER_FORMATS, 'json'].map((format) => `DsmChange.${format}`),
]);
const UUID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
/** A zoom, a column, or a row with its format: at most 10 digits, so no 12-character piece of anything. */
const TILE_NUMBER = /^\d{1,10}(\.[a-z]{3})?$/;

const CREDENTIAL_PARAMETERS: ReadonlySet<string> = new Set(['apikey', 'transactionToken']);
const SHORT_NAME = /^[A-Za-z0-9_.-]{1,10}$/;
/** A tag, or one side of `type:name`, short enough that it cannot hold a piece of a secret. */
const SHORT_TAG = /^[A-Za-z0-9_-]{1,10}(:[A-Za-z0-9_-]{1,10})?$/;
/** What a kept value is printed with (every safe value below is made of these). */
const PRINTABLE_VALUE = /^[A-Za-z0-9.,:_+-]*$/;

function oneOf(words: readonly string[]): (value: string) => boolean {
  const set = new Set(words);
  return (value) => set.has(value);
}

function listOf(test: (item: string) => boolean): (value: string) => boolean {
  return (value) => value.split(',').every((item) => test(item.trim()));
}

const decimal = (value: string) => parseDecimal(value) !== undefined;

/** The declared parameters whose values may be logged, each with the test a logged value passes. */
const SAFE_VALUES: Readonly<Record<string, (value: string) => boolean>> = {
  point: (value) => {
    const parts = value.split(',');
    return parts.length === 2 && parts.every(decimal);
  },
  radius: decimal,
  limit: decimal,
  offset: decimal,
  size: (value) => /^\d{1,5}x\d{1,5}$/.test(value),
  resources: listOf(oneOf(RASTER_TYPES)),
  fields: listOf(oneOf(SURVEY_FIELDS)),
  since: (value) => parseDateOrRelative(value.trim(), '2000-01-01') !== undefined,
  until: (value) => parseDateOrRelative(value.trim(), '2000-01-01') !== undefined,
  filter: oneOf(['allTypes', 'anyTypes']),
  overlap: oneOf(['full', 'partial']),
  mosaic: oneOf(['latest', 'earliest']),
  include: listOf((tag) => SHORT_TAG.test(tag)),
  exclude: listOf((tag) => SHORT_TAG.test(tag)),
  // DsmChange: survey ids (UUIDs, as in paths) and a number of metres.
  baseline: (value) => UUID.test(value),
  after: (value) => UUID.test(value),
  threshold: decimal,
};

/** decodeURIComponent (with `+` as a space, as query strings mean it), or undefined when malformed. */
function decoded(raw: string, plusIsSpace: boolean): string | undefined {
  try {
    return decodeURIComponent(plusIsSpace ? raw.replace(/\+/g, ' ') : raw);
  } catch {
    return undefined;
  }
}

function loggableSegment(raw: string): string {
  if (raw === '') return raw;
  const segment = decoded(raw, false);
  if (segment === undefined) return REDACTED;
  return SAFE_SEGMENTS.has(segment) || UUID.test(segment) || TILE_NUMBER.test(segment) ? segment : REDACTED;
}

/** `/staticmap/v2/surveys/<uuid>/TrueOrtho.png` as is; `/nadir_3f.../x` -> `/[REDACTED]/[REDACTED]`. */
export function loggablePath(path: string): string {
  return path.split('/').map(loggableSegment).join('/');
}

function loggablePair(pair: string): string {
  const equals = pair.indexOf('=');
  const rawName = equals === -1 ? pair : pair.slice(0, equals);
  const name = decoded(rawName, true);
  const known = name !== undefined && (CREDENTIAL_PARAMETERS.has(name) || Object.hasOwn(SAFE_VALUES, name));
  const shownName = known || (name !== undefined && SHORT_NAME.test(name)) ? (name as string) : REDACTED;
  if (equals === -1) return shownName;
  const value = decoded(pair.slice(equals + 1), true);
  const test = name !== undefined && Object.hasOwn(SAFE_VALUES, name) ? SAFE_VALUES[name] : undefined;
  const safe = value !== undefined && test !== undefined && PRINTABLE_VALUE.test(value) && test(value);
  return `${shownName}=${safe ? value : REDACTED}`;
}

/** `/x?apikey=abc&point=1,2&foo=bar` -> `/x?apikey=[REDACTED]&point=1,2&foo=[REDACTED]`. */
export function loggableUrl(url: string): string {
  const queryStart = url.indexOf('?');
  const path = loggablePath(queryStart === -1 ? url : url.slice(0, queryStart));
  let logged = path;
  if (queryStart !== -1) {
    const pairs: string[] = [];
    let length = path.length;
    for (const pair of url.slice(queryStart + 1).split('&')) {
      if (length > MAX_LOGGED_URL) break;
      const shown = loggablePair(pair);
      pairs.push(shown);
      length += shown.length + 1;
    }
    logged = `${path}?${pairs.join('&')}`;
  }
  return logged.length > MAX_LOGGED_URL ? `${logged.slice(0, MAX_LOGGED_URL)}...` : logged;
}

const KNOWN_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'user-agent',
  'referer',
  'x-request-id',
  'x-forwarded-for',
  'if-none-match',
  'content-type',
  'content-length',
  'accept-encoding',
  'accept-language',
]);

/**
 * Header names kept when known or short, every value redacted. No code logs headers; this is for
 * a header object that reaches a log line by accident.
 */
export function loggableHeaders(headers: unknown): Record<string, string> {
  const shown: Record<string, string> = {};
  if (!headers || typeof headers !== 'object') return shown;
  for (const name of Object.keys(headers)) {
    shown[KNOWN_HEADERS.has(name.toLowerCase()) || SHORT_NAME.test(name) ? name : REDACTED] = REDACTED;
  }
  return shown;
}

/** Anything shaped like a key or a token (whole, or the start of one), for error messages and stacks. */
const KEY_SHAPE = /nadir_[0-9a-f]{0,12}_?[A-Za-z0-9_-]*/g;
const TOKEN_SHAPE = /\bt1\.[A-Za-z0-9_-]*\.?[A-Za-z0-9_-]*/g;
/** Long base64url-looking runs with upper case, lower case and digits: what a secret looks like. */
const SECRET_LOOKING_RUN = /(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{16,}/g;
/**
 * A 43-character secret has no digit about once in 150 keys, so longer mixed-case runs count
 * too; identifiers in stacks are rarely 32 characters long.
 */
const LONG_MIXED_CASE_RUN = /(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])[A-Za-z0-9_-]{32,}/g;

export function redactSecrets(text: string): string {
  return text
    .replace(KEY_SHAPE, REDACTED)
    .replace(TOKEN_SHAPE, REDACTED)
    .replace(SECRET_LOOKING_RUN, REDACTED)
    .replace(LONG_MIXED_CASE_RUN, REDACTED);
}

export interface LogDestination {
  write(line: string): void;
}

/**
 * The process's JSON logger (made once, by the composition root; fastify logs through it too).
 * Every line names the server that wrote it (`server`), for a log gathered from several.
 * Requests are logged by our own one-line access log (hooks), so the request serializer only
 * matters for fastify's internal lines: it too never sees headers or a raw URL.
 */
export function createLogger(
  level: Config['logLevel'],
  server: string,
  stream?: LogDestination,
  /** Fields for every line, asked as it is written (tracing's trace and span ids). */
  mixin?: () => object,
): Logger {
  const options = {
    level,
    ...(mixin ? { mixin } : {}),
    base: { pid: process.pid, server },
    // A header object nested in a logged object (no code logs one): its credentials at least.
    redact: {
      paths: ['req.headers.authorization', 'request.headers.authorization', 'req.headers.cookie'],
      censor: REDACTED,
    },
    serializers: {
      req: (request: { method?: string; url?: string }) => ({
        method: request.method,
        url: request.url === undefined ? undefined : loggableUrl(request.url),
      }),
      headers: loggableHeaders,
      err: (error: Error & { code?: unknown }) => ({
        type: error.name,
        message: redactSecrets(String(error.message)),
        code: error.code,
        stack: redactSecrets(error.stack ?? ''),
      }),
    },
  };
  return stream ? pino(options, stream) : pino(options);
}
