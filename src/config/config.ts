import { availableParallelism, hostname } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { NadirError } from '../errors.js';

/** Where the catalogue, accounts and usage live: the embedded SQLite file, or a PostgreSQL server. */
export type DatabaseConfig = { engine: 'sqlite'; path: string } | { engine: 'postgres'; url: string };

export interface Config {
  dataDir: string;
  database: DatabaseConfig;
  /** Tile rate limits shared by every server (NADIR_REDIS_URL); absent: counted in this process. */
  redisUrl?: string;
  /** Which server answered, in every log line (NADIR_SERVER_ID, default `<hostname>:<pid>`). */
  serverId: string;
  host: string;
  port: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `k1:<base64>,k0:<base64>`; when absent, a secret is generated once and kept in the data dir. */
  tokenSecrets?: string;
  /** Public base URL for links in docs and the map page, when behind a proxy. */
  publicUrl?: string;
  /** Working memory that imagery renders may hold at once, MiB (admission control). */
  rasterBudgetMb: number;
  /** How long an imagery request may wait for that memory before 503 OVERLOADED, ms. */
  rasterQueueMs: number;
  /** Decoded map-tile pixels kept in memory, MiB (per serve worker). */
  tileCacheMb: number;
  /** Processes `nadir serve` runs (NADIR_WORKERS: a number, or `auto` for one per core). */
  workers: number;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function bad(variable: string, message: string, value: string): never {
  throw new NadirError('INVALID_CONFIG', `${variable} ${message}, got ${JSON.stringify(value)}`, { variable });
}

function integer(env: NodeJS.ProcessEnv, variable: string, fallback: number, min: number, max: number): number {
  const raw = env[variable];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) bad(variable, `must be an integer from ${min} to ${max}`, raw);
  const value = Number(raw);
  if (value < min || value > max) bad(variable, `must be an integer from ${min} to ${max}`, raw);
  return value;
}

/** A URL as it may be shown in an error: without its user and password. */
export function withoutCredentials(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/**
 * NADIR_DATABASE: a `postgres://` (or `postgresql://`) URL selects PostgreSQL; anything else is the
 * path of the SQLite file. A URL of another scheme is refused rather than taken for a file name.
 */
function parseDatabase(raw: string | undefined, dataDir: string, cwd: string): DatabaseConfig {
  const database = raw || join(dataDir, 'nadir.sqlite');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(database)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    return {
      engine: 'sqlite',
      path: database === ':memory:' || isAbsolute(database) ? database : resolve(cwd, database),
    };
  }
  if (scheme !== 'postgres' && scheme !== 'postgresql') {
    bad('NADIR_DATABASE', 'must be a SQLite file path or a postgres:// URL', withoutCredentials(database));
  }
  let url: URL;
  try {
    url = new URL(database);
  } catch {
    bad('NADIR_DATABASE', 'is not a valid postgres:// URL', withoutCredentials(database));
  }
  if (!url.hostname || url.pathname.length <= 1) {
    bad(
      'NADIR_DATABASE',
      'needs a host and a database name (postgres://user@host:5432/nadir)',
      withoutCredentials(database),
    );
  }
  return { engine: 'postgres', url: database };
}

function parseRedisUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || !url.hostname) {
    bad('NADIR_REDIS_URL', 'must be a redis:// or rediss:// URL with a host', withoutCredentials(raw));
  }
  return raw;
}

/** Parses and validates the environment once; everything else receives the result. */
export function parseConfig(env: NodeJS.ProcessEnv, cwd: string): Config {
  const dataDir = resolve(cwd, env.NADIR_DATA_DIR || './data');
  const logLevel = env.NADIR_LOG_LEVEL || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    bad('NADIR_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`, logLevel);
  }
  const publicUrl = env.NADIR_PUBLIC_URL || undefined;
  if (publicUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(publicUrl)) {
    bad('NADIR_PUBLIC_URL', 'must be an http(s) URL', publicUrl);
  }
  const host = env.NADIR_HOST || '0.0.0.0';
  return {
    dataDir,
    database: parseDatabase(env.NADIR_DATABASE, dataDir, cwd),
    redisUrl: parseRedisUrl(env.NADIR_REDIS_URL),
    serverId: env.NADIR_SERVER_ID || `${hostname()}:${process.pid}`,
    host,
    port: integer(env, 'NADIR_PORT', 8080, 0, 65535),
    logLevel: logLevel as Config['logLevel'],
    tokenSecrets: env.NADIR_TOKEN_SECRETS || undefined,
    publicUrl,
    rasterBudgetMb: integer(env, 'NADIR_RASTER_BUDGET_MB', 1024, 64, 1024 * 1024),
    rasterQueueMs: integer(env, 'NADIR_RASTER_QUEUE_MS', 10_000, 0, 600_000),
    tileCacheMb: integer(env, 'NADIR_TILE_CACHE_MB', 256, 0, 1024 * 1024),
    workers: env.NADIR_WORKERS === 'auto' ? availableParallelism() : integer(env, 'NADIR_WORKERS', 1, 1, 64),
  };
}
