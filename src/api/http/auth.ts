import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccountStore, ApiKeyLookup } from '../../accounts/index.js';
import { NadirError } from '../../errors.js';

/**
 * API-key authentication (decisions.md): the key comes from the `apikey` query parameter, or
 * from the header `Authorization: Apikey <key>` that some clients send. When both are present
 * the query parameter wins: it is the spec's documented form.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller of a route that needs one, set by its authentication hook. */
    caller: ApiKeyLookup | null;
  }
}

/** What authentication needs of the account store. */
export type ApiKeyVerifier = Pick<AccountStore, 'lookupApiKey' | 'knownApiKey'>;

const AUTHORIZATION_APIKEY = /^apikey\s+(\S+)\s*$/i;

/** Whether the key a request presents is the one in its URL (so the URL alone stands for the request). */
export function keyIsInUrl(fromQuery: unknown): fromQuery is string {
  return typeof fromQuery === 'string' && fromQuery !== '';
}

/** `fromQuery`: the apikey query parameter as parsed; `authorization`: the header. */
export function apiKeyOf(fromQuery: unknown, authorization: string | undefined): string | undefined {
  if (keyIsInUrl(fromQuery)) return fromQuery;
  const match = typeof authorization === 'string' ? AUTHORIZATION_APIKEY.exec(authorization) : null;
  return match?.[1];
}

/**
 * 401 for a missing key and for one that is malformed, unknown, revoked or whose account is
 * disabled. Those cases share one message: telling them apart would help someone guessing keys.
 */
export async function authenticate(keys: ApiKeyVerifier, request: FastifyRequest): Promise<ApiKeyLookup> {
  const key = apiKeyOf((request.query as Record<string, unknown>).apikey, request.headers.authorization);
  if (key === undefined) {
    throw new NadirError(
      'API_KEY_INVALID',
      'Missing API key: pass the apikey query parameter or the header "Authorization: Apikey <key>"',
    );
  }
  const found = await keys.lookupApiKey(key);
  if (!found) throw new NadirError('API_KEY_INVALID', 'The API key is not valid (unknown or revoked)');
  request.caller = found;
  return found;
}

/** The caller set by the route's authentication hook; a handler reached without one is a wiring bug. */
export function callerOf(request: FastifyRequest): ApiKeyLookup {
  if (!request.caller)
    throw new Error(`${request.routeOptions.url} reached its handler without an authenticated caller`);
  return request.caller;
}

export function installAuthentication(app: FastifyInstance): void {
  app.decorateRequest('caller', null);
}

/** The raster service (coverage and imagery) needs its own subscription (spec "What the service does"). */
export function requireRasterSubscription(caller: ApiKeyLookup): void {
  if (!caller.account.rasterSubscription) {
    throw new NadirError(
      'SUBSCRIPTION_REQUIRED',
      'This account does not have the raster subscription needed for coverage and imagery; ask your account manager to enable it',
    );
  }
}
