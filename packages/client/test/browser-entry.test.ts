/**
 * The browser entry (src/index.ts and everything it imports) must run on fetch alone: no Node
 * module, no Node global, and only relative imports, so the compiled dist/ loads in a page as
 * plain ES modules without a bundler (the map page is to import it that way).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const SRC = resolve(import.meta.dirname, '../src');
const IMPORT = /\b(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g;

async function browserModules(): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  const queue = [join(SRC, 'index.ts')];
  for (let file = queue.pop(); file; file = queue.pop()) {
    if (seen.has(file)) continue;
    const text = await readFile(file, 'utf8');
    seen.set(file, text);
    for (const match of text.matchAll(IMPORT)) {
      const specifier = (match[1] ?? match[2]) as string;
      assert.ok(
        specifier.startsWith('./') || specifier.startsWith('../'),
        `${relative(SRC, file)} imports ${specifier}: not relative`,
      );
      queue.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
    }
  }
  return seen;
}

test('the browser entry imports only its own relative modules, none of them Node-only', async () => {
  const modules = await browserModules();
  assert.ok(modules.size >= 10, `found ${modules.size} modules`);
  for (const [file, text] of modules) {
    const name = relative(SRC, file);
    assert.ok(!name.startsWith('node'), `${name} is Node-only but reachable from the browser entry`);
    // Node globals a browser lacks (comments aside).
    const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    assert.doesNotMatch(code, /\b(process\.|Buffer\b|require\(|__dirname)/, `${name} uses a Node global`);
  }
});
