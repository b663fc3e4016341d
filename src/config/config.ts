import { availableParallelism, hostname } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { NadirError } from '../errors.js';
import { DEFAULT_JPEG_QUALITY } from '../geo/asset-layout.js';
import { parseTracingConfig, type TracingConfig } from './otel-config.js';

/** AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN); absent: the SDK's own chain. */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Where survey files live: a local folder, an S3(-compatible) bucket, or read-only HTTP(S). */
export type StorageConfig =
  | { kind: 'local'; root: string }
  | {
      kind: 's3';
      bucket: string;
      prefix: string;
      region: string;
      endpoint?: string;
      credentials?: S3Credentials;
      /** A read slower than this is a storage failure (503), ms (NADIR_STORAGE_TIMEOUT_MS). */
      timeoutMs: number;
      /** Memory for blocks of survey files read from the store, MiB (NADIR_STORAGE_CACHE_MB; 0: none). */
      cacheMb: number;
    }
  | { kind: 'http'; base: string; timeoutMs: number; cacheMb: number };

/**
 * How long node:http gives a client to send a request, and keeps an idle connection (docs/http.md).
 * A timed-out request head or request is answered 408 and its connection closed.
 */
export interface HttpTimeouts {
  /** The request line and headers must arrive whole within this, ms (NADIR_HTTP_HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number;
  /** The whole request, head and body, ms; 0: no limit beyond the head's (NADIR_HTTP_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this, ms (NADIR_HTTP_KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs: number;
}

/** Where the catalogue, accounts and usage live: the embedded SQLite file, or a PostgreSQL server. */
export type DatabaseConfig =
  | { engine: 'sqlite'; path: string }
  /**
   * `timeoutMs`: a query not answered within it is a 503 (NADIR_DATABASE_TIMEOUT_MS, default 2000).
   * `connections`: the most this process holds open (NADIR_DATABASE_CONNECTIONS, default 20).
   */
  | { engine: 'postgres'; url: string; timeoutMs?: number; connections?: number };

export interface Config {
  dataDir: string;
  database: DatabaseConfig;
  /** NADIR_STORAGE (default: the data folder). */
  storage: StorageConfig;
  /** Tile rate limits shared by every server (NADIR_REDIS_URL); absent: counted in this process. */
  redisUrl?: string;
  /** A rate-limit round trip waits at most this long before the process counts alone (NADIR_REDIS_TIMEOUT_MS). */
  redisTimeoutMs: number;
  /** Which server answered, in every log line (NADIR_SERVER_ID, default `<hostname>:<pid>`). */
  serverId: string;
  host: string;
  port: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `k1:<base64>,k0:<base64>`; when absent, a secret is generated once and kept in the data dir. */
  tokenSecrets?: string;
  /** Public base URL for links in docs and the map page, when behind a proxy. */
  publicUrl?: string;
  /**
   * An XYZ template the map page draws under the imagery (NADIR_MAP_BASEMAP), with its credit
   * (NADIR_MAP_BASEMAP_ATTRIBUTION); none by default: the demo runs offline.
   */
  mapBasemap?: { url: string; attribution: string };
  /** Working memory that imagery renders may hold at once, MiB (admission control). */
  rasterBudgetMb: number;
  /** How long an imagery request may wait for that memory before 503 OVERLOADED, ms. */
  rasterQueueMs: number;
  /** Decoded map-tile pixels kept in memory, MiB (per serve worker). */
  tileCacheMb: number;
  /** Queued ingest (PostgreSQL): seconds a job may run before it counts as lost and is retried elsewhere. */
  ingestJobTimeoutS: number;
  /** Queued ingest: how often, in seconds, lost jobs are looked for. */
  ingestQueueCheckS: number;
  /** JPEG quality of stored imagery COGs (docs/ingest.md, "Accuracy against GDAL's own mosaic"). */
  ingestJpegQuality: number;
  /** Coverage pages remembered until the catalogue changes, MiB (per serve worker; 0: none). */
  coverageCacheMb: number;
  /** Processes `nadir serve` runs (NADIR_WORKERS: a number, or `auto` for one per core). */
  workers: number;
  http: HttpTimeouts;
  /**
   * Prometheus' `/metrics` on a port of its own (NADIR_METRICS_PORT; absent: no metrics at all),
   * on NADIR_METRICS_HOST (default NADIR_HOST). docs/operations.md.
   */
  metrics?: { host: string; port: number };
  /** OpenTelemetry traces over OTLP/HTTP, when the standard OTEL_* variables name an endpoint. */
  tracing?: TracingConfig;
}

/**
 * PostgreSQL connections a process holds at most (NADIR_DATABASE_CONNECTIONS): enough for 16+
 * requests in flight, as a query takes well under a millisecond. Every server holds its own, and
 * each is a backend process on the database: a fleet sizes it so that all servers together stay
 * near what the database's cores can run at once (docs/deploy.md).
 */
export const DEFAULT_DATABASE_CONNECTIONS = 20;

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
function parseDatabase(env: NodeJS.ProcessEnv, dataDir: string, cwd: string): DatabaseConfig {
  const database = env.NADIR_DATABASE || join(dataDir, 'nadir.sqlite');
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
  return {
    engine: 'postgres',
    url: database,
    timeoutMs: integer(env, 'NADIR_DATABASE_TIMEOUT_MS', 2_000, 100, 120_000),
    connections: integer(env, 'NADIR_DATABASE_CONNECTIONS', DEFAULT_DATABASE_CONNECTIONS, 1, 1_000),
  };
}

/**
 * NADIR_STORAGE: a folder (default the data folder), `s3://bucket/prefix` (credentials and region
 * from the standard AWS variables, NADIR_S3_ENDPOINT for an S3-compatible store), or an
 * `https://` base URL that only serves (a CDN in front of the bucket).
 */
function parseStorage(env: NodeJS.ProcessEnv, dataDir: string, cwd: string): StorageConfig {
  const raw = env.NADIR_STORAGE || dataDir;
  const endpoint = env.NADIR_S3_ENDPOINT || undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^\s/]+\/?$/.test(endpoint)) {
    bad('NADIR_S3_ENDPOINT', 'must be an http(s)://host[:port] URL', withoutCredentials(endpoint));
  }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(raw)?.[1]?.toLowerCase();
  if (scheme === undefined) return { kind: 'local', root: resolve(cwd, raw) };
  const timeoutMs = integer(env, 'NADIR_STORAGE_TIMEOUT_MS', 10_000, 100, 600_000);
  const cacheMb = integer(env, 'NADIR_STORAGE_CACHE_MB', 64, 0, 1024 * 1024);
  if (scheme === 's3') {
    const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
    if (!match) bad('NADIR_STORAGE', 'must be s3://bucket/prefix with a valid bucket name', raw);
    const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
    const prefix = (match[2] ?? '').replace(/\/+$/, '');
    const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN } = env;
    const credentials =
      accessKeyId && secretAccessKey
        ? { accessKeyId, secretAccessKey, ...(AWS_SESSION_TOKEN ? { sessionToken: AWS_SESSION_TOKEN } : {}) }
        : undefined;
    return {
      kind: 's3',
      bucket: match[1] as string,
      prefix,
      region,
      timeoutMs,
      cacheMb,
      ...(endpoint ? { endpoint } : {}),
      ...(credentials ? { credentials } : {}),
    };
  }
  if (scheme === 'http' || scheme === 'https') {
    try {
      return { kind: 'http', base: new URL(raw).href.replace(/\/+$/, ''), timeoutMs, cacheMb };
    } catch {
      bad('NADIR_STORAGE', 'is not a valid URL', withoutCredentials(raw));
    }
  }
  bad('NADIR_STORAGE', 'must be a folder, s3://bucket/prefix or an http(s):// URL', withoutCredentials(raw));
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

/**
 * NADIR_HTTP_*_MS. The defaults are node:http's own for the head (60 s) and the whole request
 * (5 min); the keep-alive timeout is longer than node's 5 s so that a load balancer's idle
 * timeout (60 s for most) ends a connection before nadir does, never in the middle of a request.
 */
function parseHttpTimeouts(env: NodeJS.ProcessEnv): HttpTimeouts {
  const headersTimeoutMs = integer(env, 'NADIR_HTTP_HEADERS_TIMEOUT_MS', 60_000, 100, 3_600_000);
  const requestTimeoutMs = integer(env, 'NADIR_HTTP_REQUEST_TIMEOUT_MS', 300_000, 0, 3_600_000);
  if (requestTimeoutMs !== 0 && requestTimeoutMs < headersTimeoutMs) {
    bad(
      'NADIR_HTTP_REQUEST_TIMEOUT_MS',
      `must be 0 or at least NADIR_HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs})`,
      env.NADIR_HTTP_REQUEST_TIMEOUT_MS ?? String(requestTimeoutMs),
    );
  }
  const keepAliveTimeoutMs = integer(env, 'NADIR_HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000);
  return { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs };
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
  const basemap = env.NADIR_MAP_BASEMAP || undefined;
  if (basemap !== undefined && !/^https?:\/\/[^\s"'<>]+$/.test(basemap)) {
    bad('NADIR_MAP_BASEMAP', 'must be an http(s) URL template', basemap);
  }
  if (basemap !== undefined && !['{z}', '{x}', '{y}'].every((part) => basemap.includes(part))) {
    bad('NADIR_MAP_BASEMAP', 'must hold {z}, {x} and {y}', basemap);
  }
  const host = env.NADIR_HOST || '0.0.0.0';
  const tracing = parseTracingConfig(env);
  return {
    dataDir,
    database: parseDatabase(env, dataDir, cwd),
    storage: parseStorage(env, dataDir, cwd),
    redisUrl: parseRedisUrl(env.NADIR_REDIS_URL),
    redisTimeoutMs: integer(env, 'NADIR_REDIS_TIMEOUT_MS', 50, 5, 10_000),
    serverId: env.NADIR_SERVER_ID || `${hostname()}:${process.pid}`,
    host,
    port: integer(env, 'NADIR_PORT', 8080, 0, 65535),
    logLevel: logLevel as Config['logLevel'],
    tokenSecrets: env.NADIR_TOKEN_SECRETS || undefined,
    publicUrl,
    ...(basemap ? { mapBasemap: { url: basemap, attribution: env.NADIR_MAP_BASEMAP_ATTRIBUTION || '' } } : {}),
    rasterBudgetMb: integer(env, 'NADIR_RASTER_BUDGET_MB', 1024, 64, 1024 * 1024),
    rasterQueueMs: integer(env, 'NADIR_RASTER_QUEUE_MS', 10_000, 0, 600_000),
    tileCacheMb: integer(env, 'NADIR_TILE_CACHE_MB', 256, 0, 1024 * 1024),
    ingestJobTimeoutS: integer(env, 'NADIR_INGEST_JOB_TIMEOUT_S', 900, 1, 86_400),
    ingestQueueCheckS: integer(env, 'NADIR_INGEST_QUEUE_CHECK_S', 60, 1, 3_600),
    ingestJpegQuality: integer(env, 'NADIR_INGEST_JPEG_QUALITY', DEFAULT_JPEG_QUALITY, 50, 100),
    coverageCacheMb: integer(env, 'NADIR_COVERAGE_CACHE_MB', 64, 0, 1024 * 1024),
    workers: env.NADIR_WORKERS === 'auto' ? availableParallelism() : integer(env, 'NADIR_WORKERS', 1, 1, 64),
    http: parseHttpTimeouts(env),
    ...(env.NADIR_METRICS_PORT
      ? { metrics: { host: env.NADIR_METRICS_HOST || host, port: integer(env, 'NADIR_METRICS_PORT', 0, 0, 65535) } }
      : {}),
    ...(tracing ? { tracing } : {}),
  };
}
