/**
 * Domain errors carry a stable machine code; the HTTP layer maps codes to statuses in one table
 * (src/api/http/error-table.ts), the CLI prints the message. Nothing below the API knows about HTTP.
 */
export type ErrorCode =
  | 'INVALID_PARAMETER'
  | 'API_KEY_INVALID'
  | 'SUBSCRIPTION_REQUIRED'
  | 'TRANSACTION_TOKEN_INVALID'
  | 'ALLOWANCE_EXCEEDED'
  | 'SURVEY_NOT_FOUND'
  | 'CONTENT_NOT_FOUND'
  | 'NO_IMAGERY'
  | 'SAME_SURVEY'
  | 'BASELINE_NOT_EARLIER'
  | 'NO_BASELINE'
  | 'SURVEYS_DISJOINT'
  | 'RATE_LIMITED'
  | 'OVERLOADED'
  | 'STORAGE_UNAVAILABLE'
  | 'DATABASE_UNAVAILABLE'
  | 'NOT_FOUND'
  | 'INVALID_MANIFEST'
  | 'INVALID_SOURCE'
  | 'INVALID_CONFIG'
  | 'ACCOUNT_NOT_FOUND'
  | 'INTERNAL';

export class NadirError extends Error {
  readonly code: ErrorCode;
  /** Extra fields for the JSON body, e.g. `{ parameter: 'radius' }`. */
  readonly details: Record<string, unknown>;

  /** `options.cause`: what went wrong underneath, for the log (never the answer's body). */
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NadirError';
    this.code = code;
    this.details = details;
  }
}

export function invalidParameter(parameter: string, message: string): NadirError {
  return new NadirError('INVALID_PARAMETER', message, { parameter });
}

export function isNadirError(error: unknown): error is NadirError {
  return error instanceof NadirError;
}

const ONE_LINE_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text as one line of a terminal or a log: line breaks and other control characters (a name, a
 * path or a parser's excerpt of a file may hold any) written as escapes, so a message stays one
 * line and cannot move a terminal's cursor.
 */
export function oneLine(text: string): string {
  let line = '';
  for (const c of text) {
    const code = c.charCodeAt(0);
    const control = code < 0x20 || (code >= 0x7f && code < 0xa0) || code === 0x2028 || code === 0x2029;
    if (!control) line += c;
    else line += ONE_LINE_ESCAPES[c] ?? `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return line;
}

/** A value as a message quotes it: JSON (any character shows as an escape), cut after `max` characters. */
export function quoted(value: unknown, max = 80): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

/** Node's socket errors for a peer that is gone, refused or never answered (every engine's client meets them). */
export const SOCKET_ERROR_CODES: readonly string[] = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
];
