import postgres from 'postgres';
import { withoutCredentials } from '../config/config.js';
import { NadirError } from '../errors.js';
import { type Migrations, schemaAhead } from './migrations.js';

export type PostgresSql = postgres.Sql;
/** A transaction's handle (sql.begin's callback argument). */
export type PostgresTransaction = postgres.TransactionSql;

/** Connections per process: enough for 16+ requests in flight (a query takes well under a ms). */
const POOL_SIZE = 20;

/**
 * Opens a pool to the server at `url` and proves it answers, so a server that cannot reach its
 * database fails at start with one clear line instead of on its first request.
 */
export async function openPostgres(url: string): Promise<PostgresSql> {
  const sql = postgres(url, {
    max: POOL_SIZE,
    // NOTICEs (CREATE EXTENSION IF NOT EXISTS, ...) are not worth a line on stderr.
    onnotice: () => undefined,
    connect_timeout: 10,
    // Types stay as PostgreSQL sends them where we read them as text (dates, bigints).
    types: {},
  });
  try {
    await sql`SELECT 1`;
  } catch (error) {
    await sql.end({ timeout: 0 }).catch(() => undefined);
    throw new NadirError(
      'INVALID_CONFIG',
      `Cannot reach PostgreSQL at ${withoutCredentials(url)}: ${(error as Error).message}`,
    );
  }
  return sql;
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
