/**
 * Domain errors carry a stable machine code; the HTTP layer maps codes to statuses in one table
 * (src/api/error-table.ts), the CLI prints the message. Nothing below the API knows about HTTP.
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
  | 'RATE_LIMITED'
  | 'OVERLOADED'
  | 'STORAGE_UNAVAILABLE'
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
