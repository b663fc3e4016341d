import type { FastifyRequest } from 'fastify';
import type { AccountStore, ApiKeyLookup } from '../accounts/index.js';
import { NadirError } from '../errors.js';

/**
 * API-key authentication (decisions.md): the key comes from the `apikey` query parameter, or
 * from the header `Authorization: Apikey <key>` that some clients send. When both are present
 * the query parameter wins: it is the spec's documented form.
 */

const AUTHORIZATION_APIKEY = /^apikey\s+(\S+)\s*$/i;

/** `fromQuery`: the apikey query parameter as parsed; `authorization`: the header. */
export function apiKeyOf(fromQuery: unknown, authorization: string | undefined): string | undefined {
  if (typeof fromQuery === 'string' && fromQuery !== '') return fromQuery;
  const match = typeof authorization === 'string' ? AUTHORIZATION_APIKEY.exec(authorization) : null;
  return match?.[1];
}

export function presentedApiKey(request: FastifyRequest): string | undefined {
  return apiKeyOf((request.query as Record<string, unknown>).apikey, request.headers.authorization);
}

/**
 * 401 for a missing key and for one that is malformed, unknown, revoked or whose account is
 * disabled. Those cases share one message: telling them apart would help someone guessing keys.
 */
export async function authenticate(accounts: AccountStore, request: FastifyRequest): Promise<ApiKeyLookup> {
  const key = presentedApiKey(request);
  if (key === undefined) {
    throw new NadirError(
      'API_KEY_INVALID',
      'Missing API key: pass the apikey query parameter or the header "Authorization: Apikey <key>"',
    );
  }
  const found = await accounts.lookupApiKey(key);
  if (!found) throw new NadirError('API_KEY_INVALID', 'The API key is not valid (unknown or revoked)');
  return found;
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
