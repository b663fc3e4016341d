/**
 * What the client throws. Every failure the service answers is a NadirApiError carrying the JSON
 * error's `code` (docs/api.md "Errors"), so callers branch on codes, not on messages; subclasses
 * name the few a program usually handles on its own.
 */

/** The JSON body of every error the service answers. */
export interface ErrorBody {
  error: string;
  code: string;
  parameter?: string;
  reason?: string;
}

export class NadirApiError extends Error {
  override readonly name: string = 'NadirApiError';
  constructor(
    /** HTTP status. */
    readonly status: number,
    /** The stable code, e.g. INVALID_PARAMETER; `HTTP_<status>` when the body was not nadir's JSON. */
    readonly code: string,
    message: string,
    /** The offending parameter of an INVALID_PARAMETER. */
    readonly parameter?: string,
    /** Why a transaction token was refused (expired, aoi_mismatch, ...). */
    readonly reason?: string,
    /** The X-Request-Id the server logged the request under. */
    readonly requestId?: string,
  ) {
    super(message);
  }

  /** The answer's headers (a 404 NO_IMAGERY tile carries the rate limit's as any tile does). */
  headers: Headers | undefined;
}

/** 429 RATE_LIMITED, thrown only once the client stopped waiting (retries used up). */
export class RateLimitedError extends NadirApiError {
  override readonly name = 'RateLimitedError';
}

/** 403 TRANSACTION_TOKEN_INVALID. */
export class TransactionTokenError extends NadirApiError {
  override readonly name = 'TransactionTokenError';
}

/** 404 NO_IMAGERY: no pixel of imagery there (not billed). */
export class NoImageryError extends NadirApiError {
  override readonly name = 'NoImageryError';
}

/** The request never got an HTTP answer (connection refused, reset, DNS), after every retry. */
export class NadirNetworkError extends Error {
  override readonly name = 'NadirNetworkError';
}

/**
 * The server answered 2xx with something the API does not describe (a page that is no item
 * collection, links that are no list), or kept sending pages past the caller's cap.
 */
export class NadirProtocolError extends Error {
  override readonly name = 'NadirProtocolError';
}

/** A call's arguments were wrong before anything was sent. */
export class NadirUsageError extends Error {
  override readonly name = 'NadirUsageError';
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as Record<string, unknown>;
  return typeof body.error === 'string' && typeof body.code === 'string';
}

/** The typed error for a non-2xx response; reads (and so consumes) its body. */
export async function errorFromResponse(response: Response): Promise<NadirApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const requestId = response.headers.get('x-request-id') ?? undefined;
  if (!isErrorBody(body)) {
    const message = `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
    return new NadirApiError(response.status, `HTTP_${response.status}`, message, undefined, undefined, requestId);
  }
  const args = [response.status, body.code, body.error, body.parameter, body.reason, requestId] as const;
  const error = typedError(body.code, args);
  error.headers = response.headers;
  return error;
}

function typedError(code: string, args: Readonly<ConstructorParameters<typeof NadirApiError>>): NadirApiError {
  switch (code) {
    case 'RATE_LIMITED':
      return new RateLimitedError(...args);
    case 'TRANSACTION_TOKEN_INVALID':
      return new TransactionTokenError(...args);
    case 'NO_IMAGERY':
      return new NoImageryError(...args);
    default:
      return new NadirApiError(...args);
  }
}
