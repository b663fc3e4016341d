/** Accounts, API keys and usage: the public surface of src/accounts. */

export { SqliteAccountStore, type SqliteAccountStoreOptions } from './sqlite-account-store.js';
export type {
  Account,
  AccountStore,
  AccountUsage,
  ApiKeyInfo,
  ApiKeyLookup,
  BillingResult,
  IssuedApiKey,
  MonthUsage,
  NewAccount,
} from './types.js';
export { usageMonthOf } from './usage-month.js';
export {
  DEFAULT_MONTHLY_ALLOWANCE,
  DEFAULT_TILE_RATE_INTERVAL_SECONDS,
  DEFAULT_TILE_RATE_LIMIT,
} from './validation.js';
