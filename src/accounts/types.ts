/**
 * The account model and the store contract. Every method is async so that a networked store
 * (PostgreSQL) can implement the same interface later without changing any caller.
 */

export interface Account {
  /** UUID. */
  id: string;
  /** Unique, compared case-insensitively ("Acme" and "acme" are the same account). */
  name: string;
  /** Enables the raster service (coverage + imagery). Tiles only need a valid key. */
  rasterSubscription: boolean;
  /** Raster transactions allowed per calendar month (UTC), integer >= 0. */
  monthlyAllowance: number;
  /** Tile requests allowed per key per interval. */
  tileRateLimit: number;
  /** Length of the tile rate-limit interval in seconds. */
  tileRateInterval: number;
  /** ISO 8601 UTC timestamp. */
  createdAt: string;
  /** A disabled account's keys and tokens stop working; its data is kept. */
  disabled: boolean;
}

export interface NewAccount {
  name: string;
  rasterSubscription?: boolean;
  monthlyAllowance?: number;
  tileRateLimit?: number;
  tileRateInterval?: number;
}

/** What an operator may see about a key: never the secret or its hash. */
export interface ApiKeyInfo {
  /** Public key id, embedded in the key itself (so it is not a secret). */
  id: string;
  accountId: string;
  /** The visible start of the key, e.g. `nadir_3f9c0a1b2c4d`, for listings and support. */
  prefix: string;
  createdAt: string;
  /** ISO timestamp, or null while the key is active. */
  revokedAt: string | null;
  revoked: boolean;
}

/** Returned by issueApiKey only: the full key is shown once and never stored. */
export interface IssuedApiKey extends ApiKeyInfo {
  key: string;
}

export interface ApiKeyLookup {
  account: Account;
  keyId: string;
}

/**
 * Outcome of recording a token's transaction.
 * - billed: this call counted the transaction (true for exactly one call per token, ever).
 * - exceeded: not counted because the month's allowance is used up.
 * Both false: the token was already billed earlier, so this retrieval is free.
 */
export interface BillingResult {
  billed: boolean;
  exceeded: boolean;
}

export interface MonthUsage {
  /** `YYYY-MM`, UTC. */
  month: string;
  transactions: number;
  tiles: number;
}

export interface AccountUsage {
  accountId: string;
  /** Sorted by month ascending; months without activity are absent. */
  months: MonthUsage[];
}

export interface AccountStore {
  createAccount(input: NewAccount): Promise<Account>;
  getAccount(accountId: string): Promise<Account | undefined>;
  getAccountByName(name: string): Promise<Account | undefined>;
  /** Sorted by name. */
  listAccounts(): Promise<Account[]>;
  setRasterSubscription(accountId: string, enabled: boolean): Promise<Account>;
  setMonthlyAllowance(accountId: string, allowance: number): Promise<Account>;
  setTileRateLimit(accountId: string, limit: number, intervalSeconds: number): Promise<Account>;
  setDisabled(accountId: string, disabled: boolean): Promise<Account>;

  issueApiKey(accountId: string): Promise<IssuedApiKey>;
  /** Oldest first. */
  listApiKeys(accountId: string): Promise<ApiKeyInfo[]>;
  /** Accepts the key id or the displayed prefix (`nadir_<id>`). */
  getApiKey(keyIdOrPrefix: string): Promise<ApiKeyInfo | undefined>;
  /** Idempotent: revoking a revoked key keeps its first revocation time. */
  revokeApiKey(keyIdOrPrefix: string): Promise<ApiKeyInfo>;
  /**
   * undefined for malformed, unknown or revoked keys, and for keys of disabled accounts. Asked on
   * every tile request: a store remembers what it verified until an account or key changes.
   */
  lookupApiKey(presentedKey: string): Promise<ApiKeyLookup | undefined>;
  /**
   * `lookupApiKey`'s answer when the store has it at hand (verified, and nothing changed since);
   * undefined means "ask lookupApiKey", not "unknown key". For the tile lane's one-step answers.
   */
  knownApiKey(presentedKey: string): ApiKeyLookup | undefined;

  /**
   * Counts the token's transaction against `month` exactly once, however many callers (or
   * processes) race; refuses without counting when the month already has >= allowance.
   */
  recordTransaction(tokenId: string, accountId: string, month: string, allowance: number): Promise<BillingResult>;
  isTokenBilled(tokenId: string): Promise<boolean>;
  addTiles(accountId: string, month: string, count: number): Promise<void>;
  /** Zero counts for a month without activity. */
  monthUsage(accountId: string, month: string): Promise<MonthUsage>;
  usage(accountId: string): Promise<AccountUsage>;

  close(): Promise<void>;
}
