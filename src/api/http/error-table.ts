import { STATUS_CODES } from 'node:http';
import type { FastifyError } from 'fastify';
import { type ErrorCode, isNadirError, NadirError } from '../../errors.js';

/**
 * THE error table: every failure the API answers, whatever raised it, leaves through here as
 * `{"error": "<sentence>", "code": "<CODE>", ...details}` (decisions.md "Status codes").
 */

/** Codes for failures of HTTP itself rather than of the domain (no route, bad URL, ...). */
export type HttpErrorCode =
  | 'METHOD_NOT_ALLOWED'
  | 'BAD_REQUEST'
  | 'REQUEST_TIMEOUT'
  | 'CONTENT_TOO_LARGE'
  | 'EXPECTATION_FAILED'
  | 'RANGE_NOT_SATISFIABLE'
  | 'HEADERS_TOO_LARGE'
  | 'NOT_READY';
export type ApiErrorCode = ErrorCode | HttpErrorCode;

/** A Record, so adding a domain code to errors.ts does not compile until it has a status here. */
export const STATUS_BY_CODE: Readonly<Record<ApiErrorCode, number>> = {
  INVALID_PARAMETER: 400,
  BAD_REQUEST: 400,
  // Ingest input errors; no HTTP route ingests today, but they are the caller's mistake.
  INVALID_MANIFEST: 400,
  INVALID_SOURCE: 400,
  API_KEY_INVALID: 401,
  SUBSCRIPTION_REQUIRED: 403,
  TRANSACTION_TOKEN_INVALID: 403,
  ALLOWANCE_EXCEEDED: 403,
  NOT_FOUND: 404,
  SURVEY_NOT_FOUND: 404,
  CONTENT_NOT_FOUND: 404,
  NO_IMAGERY: 404,
  ACCOUNT_NOT_FOUND: 404,
  // DsmChange: a change needs two different surveys, the baseline captured first (the caller's
  // mistake), and heights of both somewhere in the AOI (what the catalogue holds: not found).
  SAME_SURVEY: 400,
  BASELINE_NOT_EARLIER: 400,
  NO_BASELINE: 404,
  SURVEYS_DISJOINT: 404,
  METHOD_NOT_ALLOWED: 405,
  // node:http's own refusals of a request: too slow, a part over its size limits.
  REQUEST_TIMEOUT: 408,
  CONTENT_TOO_LARGE: 413,
  // A Range past the end of a rendered file (imagery honours Range: api/http/byte-range.ts).
  RANGE_NOT_SATISFIABLE: 416,
  EXPECTATION_FAILED: 417,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INVALID_CONFIG: 500,
  INTERNAL: 500,
  OVERLOADED: 503,
  STORAGE_UNAVAILABLE: 503,
  DATABASE_UNAVAILABLE: 503,
  NOT_READY: 503,
};

/** Codes that name a failure of HTTP itself, by which a bare HTTP status is worded. */
const HTTP_CODES: readonly ApiErrorCode[] = ['BAD_REQUEST', 'NOT_FOUND', 'METHOD_NOT_ALLOWED'];

export interface ErrorBody {
  error: string;
  code: ApiErrorCode;
  [detail: string]: unknown;
}

export interface ApiFailure {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/** Query parameters whose values are credentials: never echoed in an error or a log line. */
export const SECRET_PARAMETERS: ReadonlySet<string> = new Set(['apikey', 'transactiontoken']);

export function failure(code: ApiErrorCode, message: string, details: Record<string, unknown> = {}): ApiFailure {
  const status = STATUS_BY_CODE[code];
  const headers: Record<string, string> = {};
  const retryAfter = details.retryAfter;
  if (typeof retryAfter === 'number' && Number.isFinite(retryAfter)) {
    headers['retry-after'] = String(Math.max(0, Math.ceil(retryAfter)));
  } else if (status === 503) {
    headers['retry-after'] = '1';
  }
  return { status, headers, body: { error: message, code, ...details } };
}

/**
 * Turns anything thrown while answering a request into the response to send. Unexpected errors
 * become a bare 500 naming only the request id: their message may hold paths or SQL.
 */
export function failureFromError(error: unknown, requestId: string): ApiFailure {
  if (isNadirError(error)) {
    const status = STATUS_BY_CODE[error.code];
    if (status < 500) return failure(error.code, error.message, error.details);
    // The service's own temporary trouble, worded for the client: its message and Retry-After stand.
    if (status === 503) return failure(error.code, error.message, error.details);
    return internal(requestId);
  }
  const fastifyError = error as Partial<FastifyError>;
  if (Array.isArray(fastifyError.validation)) {
    const invalid = validationError(fastifyError as FastifyError);
    return failure(invalid.code, invalid.message, invalid.details);
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Fastify's and its plugins' own client errors (the docs' static files refusing a path, ...):
    // the code the table has for that status, else BAD_REQUEST, and always the table's status.
    const code = HTTP_CODES.find((candidate) => STATUS_BY_CODE[candidate] === status) ?? 'BAD_REQUEST';
    return failure(code, fastifyError.message || STATUS_CODES[status] || 'Bad request');
  }
  return internal(requestId);
}

function internal(requestId: string): ApiFailure {
  return failure('INTERNAL', `Internal server error; quote request id ${requestId} when reporting it`, {
    requestId,
  });
}

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  data?: unknown;
  parentSchema?: Record<string, unknown>;
}

/**
 * A fastify/ajv schema failure as INVALID_PARAMETER naming the parameter, in words a caller can
 * act on ("radius must be from 1 to 100, got 0") rather than ajv's JSON-pointer speak.
 */
export function validationError(error: FastifyError): NadirError {
  const first = (error.validation?.[0] ?? { keyword: '', instancePath: '', params: {} }) as AjvError;
  const parameter =
    first.keyword === 'required'
      ? String(first.params.missingProperty)
      : unescapePointer(first.instancePath.split('/')[1] ?? '') || (error.validationContext ?? 'request');
  if (first.keyword === 'required') {
    return new NadirError('INVALID_PARAMETER', `Missing required parameter ${parameter}`, { parameter });
  }
  return new NadirError('INVALID_PARAMETER', `${parameter} ${expectation(first)}${got(parameter, first.data)}`, {
    parameter,
  });
}

/** A JSON-pointer segment (ajv's instancePath) back to the property name. */
function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function expectation(error: AjvError): string {
  const schema = error.parentSchema ?? {};
  const { minimum, maximum } = schema;
  switch (error.keyword) {
    case 'type':
      return error.params.type === 'integer' ? 'must be an integer' : `must be a ${String(error.params.type)}`;
    case 'minimum':
    case 'maximum':
      return typeof minimum === 'number' && typeof maximum === 'number'
        ? `must be from ${minimum} to ${maximum}`
        : `${error.message ?? 'is out of range'}`;
    case 'enum':
      return `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
    default:
      return error.message ?? 'is invalid';
  }
}

function got(parameter: string, data: unknown): string {
  if (SECRET_PARAMETERS.has(parameter.toLowerCase()) || data === undefined) return '';
  const text = typeof data === 'number' ? String(data) : JSON.stringify(data);
  return `, got ${text.length > 80 ? `${text.slice(0, 80)}...` : text}`;
}
