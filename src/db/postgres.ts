import { connect, type Socket } from 'node:net';
import postgres from 'postgres';
import { DEFAULT_DATABASE_CONNECTIONS, withoutCredentials } from '../config/config.js';
import { NadirError, SOCKET_ERROR_CODES } from '../errors.js';
import type { EngineGuard } from './engine-guard.js';
import { type Migrations, schemaAhead } from './migrations.js';

export type PostgresSql = postgres.Sql;
/** A transaction's handle (sql.begin's callback argument). */
export type PostgresTransaction = postgres.TransactionSql;

/** An open pool: `sql` to query, `end` to close it (every connection, for good). */
export interface PostgresPool {
  sql: PostgresSql;
  /** Ends the pool: queries in flight get `timeoutSeconds` to finish, then connections are cut. */
  end(timeoutSeconds?: number): Promise<void>;
}

/**
 * Opens a pool to the server at `url` and proves it answers, so a server that cannot reach its
 * database fails at start with one clear line instead of on its first request. `connections`: the
 * most it holds open; queries beyond them wait in the pool for one to be free.
 */
export async function openPostgres(
  url: string,
  timeoutMs = 10_000,
  connections = DEFAULT_DATABASE_CONNECTIONS,
): Promise<PostgresPool> {
  const sockets = new PoolSockets();
  // `socket` is an option postgres.js reads (its README's option list: "fn returning custom
  // socket to use") but does not type.
  const unTyped = { socket: sockets.open } as object;
  const sql = postgres(url, {
    ...unTyped,
    max: connections,
    // NOTICEs (CREATE EXTENSION IF NOT EXISTS, ...) are not worth a line on stderr.
    onnotice: () => undefined,
    // Seconds: a server that accepts connections but never answers (stopped, overloaded) is
    // given up on as soon as the requests waiting on it are (NADIR_DATABASE_TIMEOUT_MS).
    connect_timeout: Math.max(1, Math.ceil(timeoutMs / 1000)),
    // Seconds before a connection that failed is tried again: 50 ms doubling to 1 s at most. The
    // default grows to 10-20 s after a few failures, so a server back from an outage was reached
    // that much later (by the notification listener too, which retries throughout an outage).
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    // Types stay as PostgreSQL sends them where we read them as text (dates, bigints).
    types: {},
  });
  const end = async (timeoutSeconds = 0) => {
    try {
      await sql.end({ timeout: timeoutSeconds });
    } finally {
      sockets.close();
    }
  };
  try {
    await sql`SELECT 1`;
  } catch (error) {
    await end().catch(() => undefined);
    throw new NadirError(
      'INVALID_CONFIG',
      `Cannot reach PostgreSQL at ${withoutCredentials(url)}: ${(error as Error).message}`,
    );
  }
  return { sql, end };
}

/** What postgres.js passes its `socket` option: its parsed options (hosts, ports, a Unix socket path). */
interface SocketOptions {
  host: string[];
  port: number[];
  path?: string | false;
}

/**
 * The pool's sockets, opened here rather than by postgres.js (its `socket` option), so that an
 * ended pool stays ended. postgres.js 3.4 re-opens a connection after its backoff delay with a
 * timer that ending the pool does not clear: a connection waiting out that delay when the pool
 * ended came back seconds later, idle, and kept its process alive for good (a `nadir serve`
 * stopped after its PostgreSQL restarted never exited; the library's issue 1097 is a sibling).
 * Once closed, opening throws (postgres.js reports it to the connection, which stays down) and
 * whatever is still open is destroyed.
 */
class PoolSockets {
  readonly #open = new Set<Socket>();
  #closed = false;
  #next = 0;

  readonly open = (options: SocketOptions): Socket => {
    if (this.#closed) throw new Error('the PostgreSQL pool is closed');
    // Hosts in turn, as postgres.js does for a URL naming several.
    const index = this.#next++ % Math.max(1, options.host.length);
    const host = options.host[index] ?? 'localhost';
    const socket = options.path ? connect(options.path) : connect(options.port[index] ?? 5432, host);
    // postgres.js names the TLS server after socket.host (SNI), as when it opens the socket itself.
    Object.assign(socket, { host });
    this.#open.add(socket);
    socket.once('close', () => this.#open.delete(socket));
    return socket;
  };

  close(): void {
    this.#closed = true;
    for (const socket of this.#open) socket.destroy();
  }
}

/** Node's socket errors and postgres.js's own for a connection that is gone or never came. */
const CONNECTION_ERRORS = new Set([
  ...SOCKET_ERROR_CODES,
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/**
 * Whether `error` means PostgreSQL cannot be reached or is going away (the engine-guard.ts
 * outage), not that it refused a statement: SQLSTATE class 08 (connection exception), 57P01-03
 * (shut down, crashed, starting up), 53300 (too many connections), and the socket errors.
 */
export function isPostgresUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return CONNECTION_ERRORS.has(code) || code.startsWith('08') || /^57P0[123]$/.test(code) || code === '53300';
}

/**
 * `sql` with every round trip to the server run through `guard` (engine-guard.ts): each query
 * when it is awaited (postgres.js queries are lazy, so one that is only a fragment of another is
 * never guarded on its own, nor sent), and each transaction as a whole. An open breaker refuses a
 * query before it is sent. What the stores answer from their caches (verified keys, while the
 * change counter stands) never reaches a query, so it keeps working while the server is away.
 */
export function guardSql(sql: PostgresSql, guard: EngineGuard): PostgresSql {
  const guarded = (query: unknown): unknown => {
    if (!(query instanceof Promise)) return query; // sql(rows, ...columns) and other helpers
    const send = query.then;
    Object.defineProperty(query, 'then', {
      configurable: true,
      value(fulfilled?: (value: unknown) => unknown, rejected?: (error: unknown) => unknown) {
        return guard.run(() => send.call(query, (rows: unknown) => rows)).then(fulfilled, rejected);
      },
    });
    return query;
  };
  return new Proxy(sql, {
    apply: (target, self, args) => guarded(Reflect.apply(target, self, args)),
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (typeof value !== 'function') return value;
      if (property === 'begin') {
        return (...args: unknown[]) => guard.run(() => Reflect.apply(value, target, args) as Promise<unknown>);
      }
      if (property === 'unsafe') return (...args: unknown[]) => guarded(Reflect.apply(value, target, args));
      return value;
    },
  });
}

/** One advisory lock id for every nadir migration (any 64-bit number no other program uses). */
const MIGRATION_LOCK = 0x6e616469; // "nadi"

/**
 * Applies each module's numbered migrations that the database has not seen, in one transaction
 * holding a transaction-level advisory lock: two servers starting at once take turns, and the
 * second finds the work done. A database migrated by a newer nadir is refused, not touched.
 * Returns the schema version of each module afterwards.
 */
export async function migratePostgres(sql: PostgresSql, modules: Migrations[]): Promise<Record<string, number>> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      module text NOT NULL, version integer NOT NULL, PRIMARY KEY (module, version))`;
    const versions: Record<string, number> = {};
    for (const { module, steps } of modules) {
      const rows = await tx<{ version: number }[]>`SELECT version FROM schema_migrations WHERE module = ${module}`;
      const applied = new Set(rows.map((row) => row.version));
      const newest = Math.max(0, ...applied);
      if (newest > steps.length) throw schemaAhead(module, newest, steps.length);
      for (const [index, step] of steps.entries()) {
        if (applied.has(index + 1)) continue;
        await tx.unsafe(step);
        await tx`INSERT INTO schema_migrations (module, version) VALUES (${module}, ${index + 1})`;
      }
      versions[module] = steps.length;
    }
    return versions;
  });
}
