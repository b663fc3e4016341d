/**
 * The client's types are generated from the document the service serves (scripts/client-types.ts);
 * a schema change without `npm run client:types` fails here, so the client cannot drift.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { CLIENT_TYPES_PATH, renderClientTypes } from '../../scripts/client-types.js';

test('packages/client/src/generated/openapi.ts is what the served /openapi.json generates', async () => {
  const checkedIn = await readFile(CLIENT_TYPES_PATH, 'utf8');
  const fresh = await renderClientTypes();
  assert.ok(fresh.includes('"/staticmap/v2/coverage.json"'), 'the generation sees the coverage route');
  assert.ok(
    checkedIn === fresh,
    'the client types are stale: run `npm run client:types` and commit packages/client/src/generated/openapi.ts',
  );
});
