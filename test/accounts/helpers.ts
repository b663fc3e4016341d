import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ErrorCode, NadirError } from '../../src/errors.js';

/** A fresh directory for one test's database files, removed by the returned cleanup. */
export function makeTempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'nadir-accounts-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Asserts a NadirError with `code` (not a TypeError or any other crash) and returns it. */
export function assertNadirError(error: unknown, code: ErrorCode): NadirError {
  assert.ok(error instanceof NadirError, `expected NadirError ${code}, got ${String(error)}`);
  assert.equal(error.code, code, `expected ${code}, got ${error.code}: ${error.message}`);
  return error;
}

export function throwsNadirError(run: () => unknown, code: ErrorCode): NadirError {
  try {
    run();
  } catch (error) {
    return assertNadirError(error, code);
  }
  assert.fail(`expected NadirError ${code}, but nothing was thrown`);
}

export async function rejectsNadirError(promise: Promise<unknown>, code: ErrorCode): Promise<NadirError> {
  try {
    await promise;
  } catch (error) {
    return assertNadirError(error, code);
  }
  assert.fail(`expected NadirError ${code}, but the promise resolved`);
}
