import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');

it('a command that has finished exits with its code within seconds, naming what still held it', async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './test/cli/fixtures/held-loop.ts', 'src/cli/bin.ts', '--help'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const code = await Promise.race([
    exited,
    new Promise((resolve) => setTimeout(() => resolve('still running after 15 s'), 15_000)),
  ]);
  if (code === 'still running after 15 s') child.kill('SIGKILL');
  assert.equal(code, 0, stderr);
  assert.match(stdout, /Usage: nadir <command>/);
  assert.match(stderr, /nadir: still holding TCPServerWrap 3 s after finishing; exiting/);
});
