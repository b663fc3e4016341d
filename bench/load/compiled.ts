/**
 * The compiled service (dist/) for code a part times in its own process: the JavaScript `nadir
 * serve` runs, not tsx's transpile of src/ (its name-keeping wrappers slow hot loops down, and a
 * figure should not depend on the loader). Callers type the module with `import type * as M from
 * '../../src/...'` and pass `typeof M`, so type checking needs no build; bench/run.ts checks that
 * dist/ exists before any part runs.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const DIST = join(import.meta.dirname, '../../dist');

/** `path` relative to dist/, e.g. 'raster/index.js'. */
export async function importCompiled<Module>(path: string): Promise<Module> {
  return (await import(pathToFileURL(join(DIST, path)).href)) as Module;
}
