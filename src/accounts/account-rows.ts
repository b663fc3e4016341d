/**
 * The accounts' rows as both engines return them (sqlite-schema.ts, postgres-account-store.ts:
 * the same tables and columns) and the objects they are mapped to. Where the engines differ the
 * row type says so: a flag is a boolean on PostgreSQL and 0/1 on SQLite, a tile count a bigint
 * read as text on PostgreSQL.
 */
import { displayPrefix } from './api-key.js';
import type { Account, ApiKeyInfo, MonthUsage } from './types.js';

export interface AccountRow {
  id: string;
  name: string;
  /** A boolean (PostgreSQL), or 0/1 (SQLite). */
  raster_subscription: boolean | number;
  monthly_allowance: number;
  tile_rate_limit: number;
  tile_rate_interval_seconds: number;
  /** A boolean (PostgreSQL), or 0/1 (SQLite). */
  disabled: boolean | number;
  created_at: string;
}

export interface ApiKeyRow {
  id: string;
  account_id: string;
  key_hash: Buffer;
  created_at: string;
  revoked_at: string | null;
}

export interface UsageRow {
  month: string;
  transactions: number;
  /** A number (SQLite), or PostgreSQL's bigint as text. */
  tiles: number | string;
}

export function accountFromRow(row: AccountRow): Account {
  return {
    id: row.id,
    name: row.name,
    rasterSubscription: isSet(row.raster_subscription),
    monthlyAllowance: row.monthly_allowance,
    tileRateLimit: row.tile_rate_limit,
    tileRateInterval: row.tile_rate_interval_seconds,
    createdAt: row.created_at,
    disabled: isSet(row.disabled),
  };
}

export function apiKeyInfoFromRow(row: ApiKeyRow): ApiKeyInfo {
  return {
    id: row.id,
    accountId: row.account_id,
    prefix: displayPrefix(row.id),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    revoked: row.revoked_at !== null,
  };
}

export function usageFromRow(row: UsageRow): MonthUsage {
  return { month: row.month, transactions: row.transactions, tiles: Number(row.tiles) };
}

function isSet(flag: boolean | number): boolean {
  return flag === true || flag === 1;
}
