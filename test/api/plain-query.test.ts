/**
 * plainQuery (src/api/http/query-params.ts) reads the query strings the lanes answer without
 * fastify: for every string it takes, it must read each declared parameter as URLSearchParams
 * does, and refuse a declared one given twice.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainQuery } from '../../src/api/http/query-params.js';

const DECLARED = new Set(['a', 'ab', 'apikey']);

/** What plainQuery should answer, from URLSearchParams: undefined when a declared name repeats. */
function expected(search: string): Record<string, string> | undefined {
  const params = new URLSearchParams(search);
  const query: Record<string, string> = {};
  for (const name of DECLARED) {
    const values = params.getAll(name);
    if (values.length > 1) return undefined;
    if (values.length === 1) query[name] = values[0] as string;
  }
  return query;
}

test('reads declared parameters as URLSearchParams does, every string of up to 7 of a=b&', () => {
  const alphabet = ['a', 'b', '=', '&'];
  let checked = 0;
  const visit = (search: string) => {
    assert.deepEqual(plainQuery(search, DECLARED), expected(search), JSON.stringify(search));
    checked++;
    if (search.length < 7) for (const c of alphabet) visit(search + c);
  };
  visit('');
  assert.equal(checked, (4 ** 8 - 1) / 3);
});

test('a realistic tile query, and what it leaves to fastify', () => {
  assert.deepEqual(plainQuery('apikey=nadir_k_x&since=2025-01-01&v=2&v=3', new Set(['apikey', 'since'])), {
    apikey: 'nadir_k_x',
    since: '2025-01-01',
  });
  assert.equal(plainQuery('apikey=a%20b', DECLARED), undefined);
  assert.equal(plainQuery('apikey=a+b', DECLARED), undefined);
  assert.equal(plainQuery('apikey=a&apikey=a', DECLARED), undefined);
});
