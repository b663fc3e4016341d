/**
 * The render workers start both ways the generator runs: from the TypeScript sources under tsx
 * (these tests) and from the compiled dist/ in a plain Node process (what `nadir demo` runs). A
 * worker that cannot start is silently left out, and the output is identical without it, so only
 * a worker count shows that the worker file was found and loaded (with no GDAL in it).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { RenderPool } from '../src/render-pool.js';

const exec = promisify(execFile);
const COMPILED = new URL('../dist/render-pool.js', import.meta.url);

describe('render pool', () => {
  it('starts its workers from the TypeScript sources under tsx', async () => {
    const pool = await RenderPool.start(2);
    try {
      assert.equal(pool.workerCount, 2);
    } finally {
      await pool.close();
    }
  });

  it('starts its workers from the compiled package in plain Node', {
    skip: !existsSync(COMPILED) && 'not built (npm run build)',
  }, async () => {
    // A script file, not `node -e`: workers inherit the parent's exec arguments, and an --eval's
    // --input-type stops them loading a file. No --import tsx: compiled, the worker is plain JS.
    const dir = await mkdtemp(join(tmpdir(), 'nadir-render-pool-'));
    try {
      const script = join(dir, 'start.mjs');
      await writeFile(
        script,
        `const { RenderPool } = await import(${JSON.stringify(COMPILED.href)});
const pool = await RenderPool.start(2);
process.stdout.write(String(pool.workerCount));
await pool.close();
`,
      );
      const { stdout } = await exec(process.execPath, [script], { env: { ...process.env, NODE_OPTIONS: '' } });
      assert.equal(stdout, '2');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
