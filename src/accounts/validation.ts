import { invalidParameter, NadirError } from '../errors.js';

/** decisions.md: "default for example 3000 per minute". */
export const DEFAULT_TILE_RATE_LIMIT = 3000;
export const DEFAULT_TILE_RATE_INTERVAL_SECONDS = 60;
/** New accounts may not buy raster transactions until an operator grants an allowance. */
export const DEFAULT_MONTHLY_ALLOWANCE = 0;

const MAX_NAME_LENGTH = 200;
const MONTH_PATTERN = /^\d{4}-(0[1-9]|1[0-2])$/;

/** Trims and checks an account name; names are what operators type in the admin CLI. */
export function validAccountName(name: unknown): string {
  if (typeof name !== 'string') throw invalidParameter('name', 'Account name must be a string');
  const trimmed = name.trim();
  if (trimmed.length === 0) throw invalidParameter('name', 'Account name must not be empty');
  if (trimmed.length > MAX_NAME_LENGTH) {
    throw invalidParameter('name', `Account name must be at most ${MAX_NAME_LENGTH} characters`);
  }
  return trimmed;
}

export function validAllowance(allowance: unknown): number {
  return nonNegativeInteger('monthlyAllowance', allowance);
}

export function validRateLimit(limit: unknown, intervalSeconds: unknown): [number, number] {
  return [positiveInteger('tileRateLimit', limit), positiveInteger('tileRateInterval', intervalSeconds)];
}

export function validFlag(parameter: string, value: unknown): boolean {
  if (typeof value !== 'boolean') {
    throw invalidParameter(parameter, `${parameter} must be true or false, got ${String(value)}`);
  }
  return value;
}

export function validTileCount(count: unknown): number {
  return nonNegativeInteger('count', count);
}

/** `YYYY-MM`. */
export function validMonth(month: unknown): string {
  if (typeof month !== 'string' || !MONTH_PATTERN.test(month)) {
    throw invalidParameter('month', `Month must be YYYY-MM, got ${JSON.stringify(month)}`);
  }
  return month;
}

export function validTokenId(tokenId: unknown): string {
  if (typeof tokenId !== 'string' || tokenId.length === 0 || tokenId.length > 128) {
    throw invalidParameter('tokenId', 'Token id must be a non-empty string of at most 128 characters');
  }
  return tokenId;
}

export function accountNotFound(accountIdOrName: string): NadirError {
  return new NadirError('ACCOUNT_NOT_FOUND', `No account ${JSON.stringify(accountIdOrName)}`);
}

function nonNegativeInteger(parameter: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidParameter(parameter, `${parameter} must be an integer >= 0, got ${String(value)}`);
  }
  return value;
}

function positiveInteger(parameter: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw invalidParameter(parameter, `${parameter} must be an integer >= 1, got ${String(value)}`);
  }
  return value;
}
