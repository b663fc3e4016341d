/**
 * `nadir demo` ends with what to do next: the serve command and the URLs of the map page and the
 * API docs on this configuration's port (it printed the key and stopped there), and a first call
 * with the demo's key and a point inside the town. Run on the shared demo town (idempotent: the
 * second run only checks it and prints).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { demoTown } from '../support/demo-town.js';
import { cliArgs, PROJECT_ROOT } from '../support/fixtures.js';

const exec = promisify(execFile);

describe('nadir demo', () => {
  test('prints the next steps: nadir serve, the map page and /docs at the configured port, a first call', async () => {
    const town = await demoTown();
    const { stdout } = await exec(process.execPath, cliArgs('demo'), {
      cwd: PROJECT_ROOT,
      env: { ...process.env, NADIR_DATA_DIR: town.dataDir, NADIR_PORT: '8123', NADIR_LOG_LEVEL: 'warn' },
      timeout: 120_000,
    });
    assert.match(stdout, new RegExp(`^Demo API key: ${town.apiKey}$`, 'm'));
    assert.match(stdout, /^ {2}nadir serve\b/m);
    assert.match(stdout, /^ {2}http:\/\/localhost:8123\/ +the map page$/m);
    assert.match(stdout, /^ {2}http:\/\/localhost:8123\/docs +the API/m);
    assert.ok(
      stdout.includes(`/staticmap/v2/coverage.json?apikey=${town.apiKey}&point=-85.4181766,29.94582896&radius=50`),
      stdout,
    );
  });
});
