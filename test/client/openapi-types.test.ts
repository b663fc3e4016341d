/**
 * The client's types and facts are generated from the document the service serves
 * (scripts/client-types.ts); a schema change without `npm run client:types` fails here, so the
 * client cannot drift.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { test } from 'node:test';
import { CLIENT_FACTS_PATH, CLIENT_TYPES_PATH, renderClientFiles } from '../../scripts/client-types.js';

test('packages/client/src/generated/ is what the served /openapi.json generates', async () => {
  const files = await renderClientFiles();
  assert.deepEqual(
    files.map((file) => file.path),
    [CLIENT_TYPES_PATH, CLIENT_FACTS_PATH],
  );
  const [types, facts] = files.map((file) => file.text) as [string, string];
  assert.ok(types.includes('"/staticmap/v2/coverage.json"'), 'the generation sees the coverage route');
  assert.ok(types.includes('StacLink: {'), "the generation names the STAC answers' link");
  assert.ok(facts.includes('export const PANORAMA_QUARTER_TURNS = {'), 'the generation reads the quarter turns');
  for (const { path, text } of files) {
    const checkedIn = await readFile(path, 'utf8');
    assert.ok(
      checkedIn === text,
      `the client's generated files are stale: run \`npm run client:types\` and commit ${relative(process.cwd(), path)}`,
    );
  }
});
