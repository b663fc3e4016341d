import type { AccountStore, BillingResult } from '../accounts/types.js';
import { usageMonthOf } from '../accounts/usage-month.js';
import { NadirError } from '../errors.js';
import type { Aoi } from '../geo/aoi.js';
import { invalidToken, type TokenCodec } from './token-codec.js';

/** decisions.md: the request's point must equal the token's within 1e-7 degrees (~1 cm). */
export const POINT_TOLERANCE_DEGREES = 1e-7;

export interface ImageryRequest {
  token: string;
  lon: number;
  lat: number;
  radius: number;
}

/** What verifying and billing a token needs of the account store. */
export type ImageryAccounts = Pick<
  AccountStore,
  'getApiKey' | 'getAccount' | 'isTokenBilled' | 'monthUsage' | 'recordTransaction'
>;

export interface VerifiedImageryAccess {
  accountId: string;
  keyId: string;
  tokenId: string;
  /** The AOI the token was issued for (the request's radius may be smaller). */
  aoi: Aoi;
  /** The account's monthly transaction allowance, read with the account during verification. */
  allowance: number;
}

/**
 * The area a token was issued for, when it decrypts and has not expired: what a STAC search with
 * the token makes its items' downloads of (gis/stac-aoi-assets.ts). The key and account are
 * checked when a download is made (verifyImageryRequest).
 */
export function tokenArea(codec: Pick<TokenCodec, 'decode'>, token: string, now: Date): Aoi {
  const claims = codec.decode(token);
  if (now.getTime() >= claims.expiresAt.getTime()) {
    throw invalidToken('expired', `Transaction token expired at ${claims.expiresAt.toISOString()}`);
  }
  return claims.aoi;
}

/**
 * Decides whether an imagery request may use its transaction token. Checks, in order: the token
 * decrypts (malformed / tampered / retired secret), it has not expired, the request is inside
 * the token's AOI, the API key is still active, and the account still has the raster
 * subscription. Every refusal is TRANSACTION_TOKEN_INVALID with a message saying which.
 *
 * A cancelled subscription is reported as an invalid token (403 TRANSACTION_TOKEN_INVALID, reason
 * `subscription_cancelled`) rather than SUBSCRIPTION_REQUIRED, because decisions.md says a
 * cancelled subscription invalidates its tokens: the client's fix is the same as for a revoked
 * key (get a new token once access is restored), and the status is 403 either way.
 * A disabled account is treated the same way.
 */
export async function verifyImageryRequest(
  codec: Pick<TokenCodec, 'decode'>,
  store: ImageryAccounts,
  request: ImageryRequest,
  now: Date,
): Promise<VerifiedImageryAccess> {
  const claims = codec.decode(request.token);
  if (now.getTime() >= claims.expiresAt.getTime()) {
    throw invalidToken('expired', `Transaction token expired at ${claims.expiresAt.toISOString()}`);
  }
  if (!withinTokenAoi(request, claims.aoi)) {
    throw invalidToken(
      'aoi_mismatch',
      'Transaction token was issued for another area: point must equal the coverage request point and radius must not exceed its radius',
    );
  }
  const apiKey = await store.getApiKey(claims.keyId);
  if (!apiKey || apiKey.revoked || apiKey.accountId !== claims.accountId) {
    throw invalidToken('key_revoked', 'Transaction token is no longer valid: its API key was revoked');
  }
  const account = await store.getAccount(claims.accountId);
  if (!account || account.disabled) {
    throw invalidToken('account_disabled', 'Transaction token is no longer valid: its account is disabled');
  }
  if (!account.rasterSubscription) {
    throw invalidToken(
      'subscription_cancelled',
      "Transaction token is no longer valid: the account's raster subscription was cancelled",
    );
  }
  return {
    accountId: claims.accountId,
    keyId: claims.keyId,
    tokenId: claims.tokenId,
    aoi: claims.aoi,
    allowance: account.monthlyAllowance,
  };
}

/**
 * Cheap refusal BEFORE rendering: a token not yet billed needs room in this month's allowance.
 * Racing requests can all pass this; billImageRetrieval is the authoritative check.
 */
export async function checkAllowance(
  store: ImageryAccounts,
  verified: VerifiedImageryAccess,
  now: Date,
): Promise<void> {
  if (await store.isTokenBilled(verified.tokenId)) return;
  const { allowance } = verified;
  const month = usageMonthOf(now);
  const { transactions } = await store.monthUsage(verified.accountId, month);
  if (transactions >= allowance) throw allowanceExceeded(allowance, month);
}

/**
 * Call after an image was rendered successfully, before sending it: records the token's one
 * transaction in the month of `now` (free if already billed) or throws ALLOWANCE_EXCEEDED when
 * the month is full, in which case the image must not be sent.
 */
export async function billImageRetrieval(
  store: ImageryAccounts,
  verified: VerifiedImageryAccess,
  now: Date,
): Promise<BillingResult> {
  const { allowance } = verified;
  const month = usageMonthOf(now);
  const result = await store.recordTransaction(verified.tokenId, verified.accountId, month, allowance);
  if (result.exceeded) throw allowanceExceeded(allowance, month);
  return result;
}

function withinTokenAoi(request: ImageryRequest, tokenAoi: Aoi): boolean {
  // Written so that NaN anywhere fails every comparison and so the check.
  return (
    Math.abs(request.lon - tokenAoi.lon) <= POINT_TOLERANCE_DEGREES &&
    Math.abs(request.lat - tokenAoi.lat) <= POINT_TOLERANCE_DEGREES &&
    request.radius <= tokenAoi.radius
  );
}

function allowanceExceeded(allowance: number, month: string): NadirError {
  return new NadirError(
    'ALLOWANCE_EXCEEDED',
    `Monthly allowance of ${allowance} transactions for ${month} is used up`,
    { month, allowance },
  );
}
