/**
 * No module imports itself back, directly or through others, in the service, the benchmark or the
 * workspace packages: a cycle is how a raw-result type ends up declared by the runner its report
 * imports (issue 15). Type-only imports count too: they tie two files' meaning together the same way.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { PROJECT_ROOT } from '../support/fixtures.js';

const SPECIFIER = /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s*'(\.[^']+)'|\bimport\s*\(\s*'(\.[^']+)'\s*\)/g;

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (name === 'node_modules' || name === 'dist') return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Relative imports of one file, as the .ts files they name (imports of other files are not edges). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(SPECIFIER)]
    .map((match) => resolve(dirname(file), (match[1] ?? match[2]) as string).replace(/\.js$/, '.ts'))
    .filter((path) => existsSync(path));
}

/** One cycle per strongly tied group found by a depth-first walk, as the files around it. */
function findCycles(files: string[]): string[][] {
  return cyclesOf(new Map(files.map((file) => [file, importsOf(file)])));
}

/** The same over any graph: each node and the nodes it points to. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const files = [...graph.keys()];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return cycles;
}

describe('import cycles', () => {
  for (const folder of ['src', 'bench', 'packages']) {
    it(`${folder}/ has none`, () => {
      const cycles = findCycles(sourceFiles(join(PROJECT_ROOT, folder)));
      const shown = cycles.map((cycle) => cycle.map((file) => relative(PROJECT_ROOT, file)).join(' -> '));
      assert.deepEqual(shown, []);
    });
  }

  it("src/'s folders import no folder that imports them back (src/api's folders each a folder of their own)", () => {
    const src = join(PROJECT_ROOT, 'src');
    // A folder as a reader meets it: src/<name>/, and below src/api/ each folder of routes, its shared
    // http/ and server.ts (src/api itself); a file directly in src/ is a unit of its own.
    const unitOf = (file: string) => {
      const parts = relative(src, file).split('/');
      const depth = parts[0] === 'api' && parts.length > 2 ? 2 : 1;
      return parts.length === 1 ? (parts[0] as string) : parts.slice(0, depth).join('/');
    };
    const files = sourceFiles(src);
    const edges = new Map<string, Set<string>>();
    for (const file of files) {
      for (const target of importsOf(file)) {
        const [from, to] = [unitOf(file), unitOf(target)];
        if (from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to));
      }
    }
    const cycles = cyclesOf(new Map([...edges].map(([from, tos]) => [from, [...tos]])));
    assert.deepEqual(
      cycles.map((cycle) => cycle.join(' -> ')),
      [],
    );
  });

  it('reports a cycle through a type-only import, and none once it is broken', () => {
    const folder = mkdtempSync(join(tmpdir(), 'nadir-cycles-'));
    try {
      const run = join(folder, 'run.ts');
      const report = join(folder, 'report.ts');
      writeFileSync(run, "import { words } from './report.js';\nexport interface Raw { n: number }\n");
      writeFileSync(report, "import type { Raw } from './run.js';\nexport const words = (r: Raw) => String(r.n);\n");
      assert.deepEqual(findCycles([run, report]), [[run, report, run]]);
      writeFileSync(report, 'export const words = (r: { n: number }) => String(r.n);\n');
      assert.deepEqual(findCycles([run, report]), []);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
