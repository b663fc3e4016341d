import { NadirError } from '../errors.js';

/**
 * A store's schema history: numbered steps, applied once each, in order, recorded in
 * `schema_migrations` under the store's module name (so the catalogue and the accounts can share
 * one database without knowing about each other). Never edit a shipped step: append a new one.
 */
export interface Migrations {
  module: string;
  steps: readonly string[];
}

/** A database written by a newer nadir: an older one must not run on it (nor "fix" it). */
export function schemaAhead(module: string, found: number, known: number): NadirError {
  return new NadirError(
    'INVALID_CONFIG',
    `The database's ${module} schema is version ${found}, newer than this nadir knows (${known}): upgrade nadir`,
  );
}
