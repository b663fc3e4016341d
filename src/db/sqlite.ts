import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { type Migrations, schemaAhead } from './migrations.js';

export type SqliteDatabase = Database.Database;

/** Opens (creating if needed) the embedded database with settings safe for several processes. */
export function openSqlite(path: string): SqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  // WAL lets the server read while `nadir ingest` writes from another process.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 10000');
  db.pragma('foreign_keys = ON');
  // Searches visit one survey row per candidate: with SQLite's default 2 MB cache each visit
  // is a read() syscall. Memory-mapped pages (only those touched are resident) halve a search.
  // As much as SQLite allows (it caps this at its build's maximum, 2 GiB here): a catalogue of
  // 1M surveys is a 1.4 GB file, and searches beyond the mapped part went back to read().
  db.pragma('mmap_size = 17179869184');
  db.pragma('cache_size = -65536');
  return db;
}

/**
 * Applies a store's migrations that the file has not seen (migrations.ts). IMMEDIATE takes the
 * write lock before reading what is applied, so two processes opening a new file at once cannot
 * both run the same step. A file migrated by a newer nadir is refused. Returns the version.
 */
export function migrate(db: SqliteDatabase, { module, steps }: Migrations): number {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (module TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (module, version))',
  );
  const appliedVersions = db.prepare('SELECT version FROM schema_migrations WHERE module = ?');
  const record = db.prepare('INSERT INTO schema_migrations (module, version) VALUES (?, ?)');
  db.transaction(() => {
    const applied = new Set((appliedVersions.all(module) as { version: number }[]).map((row) => row.version));
    const newest = Math.max(0, ...applied);
    if (newest > steps.length) throw schemaAhead(module, newest, steps.length);
    steps.forEach((sql, index) => {
      if (applied.has(index + 1)) return;
      db.exec(sql);
      record.run(module, index + 1);
    });
  }).immediate();
  return steps.length;
}
