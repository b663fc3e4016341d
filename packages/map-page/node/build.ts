/**
 * The map page's build, run after `tsc -b` by the root's `npm run build` and scripts/setup.sh
 * (`node packages/map-page/dist/build.js`). It writes into dist/page/ (MAP_PAGE_DIR):
 *
 * - src/*.ts, each its own ES module with its types stripped (esbuild). Not one bundle: the page
 *   is served as it always was, /map/map.js importing /map/grids.js and the rest, so its URLs stay
 *   what they were. `@nadir/client` becomes `./client/index.js`: a browser resolves no package
 *   names, and an import map would be an inline script, which the page's CSP refuses.
 * - static/ (index.html, the style sheets) as it is.
 * - @nadir/client's browser entry, found through that package's declared entry: its index.js and
 *   every module it imports (esbuild follows the imports, for the browser, so a Node module among
 *   them fails the build), copied to client/ as the client's build compiled them.
 *
 * and dist/page-files.json, the list of what to serve (MAP_PAGE_MANIFEST). Only files whose
 * content changed are written and files no longer built are removed: a run when nothing changed
 * touches nothing (a server starting meanwhile never reads a half-written file) and takes ~0.1 s.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import {
  CHANGE_RAMP_FILE,
  CHANGE_RAMP_PLACEHOLDER,
  DEMO_KEY_PLACEHOLDER,
  MAP_PAGE_DIR,
  MAP_PAGE_MANIFEST,
  type MapPageFiles,
} from './index.js';

const PACKAGE = fileURLToPath(new URL('../', import.meta.url));
const SRC = join(PACKAGE, 'src');
const STATIC = join(PACKAGE, 'static');
const HTML = 'index.html';
/** Where the page's modules find @nadir/client once built: dist/page/client/index.js. */
const CLIENT_IMPORT = './client/index.js';

/** A page module's imports stay imports: its sibling modules as they are, @nadir/client rewritten. */
const pageImports: Plugin = {
  name: 'nadir-page-imports',
  setup(builder) {
    builder.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      if (args.path === '@nadir/client') return { path: CLIENT_IMPORT, external: true };
      if (/^\.\/[\w-]+\.js$/.test(args.path)) return { path: args.path, external: true };
      return { errors: [{ text: `the page imports its own modules and @nadir/client only, not ${args.path}` }] };
    });
  },
};

/** The page's modules, each to dist/page/<name>.js. Declaration files (types only) make none. */
async function buildPage(): Promise<Map<string, Uint8Array>> {
  const modules = (await readdir(SRC)).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts')).sort();
  const result = await build({
    absWorkingDir: PACKAGE,
    entryPoints: modules.map((name) => join(SRC, name)),
    outdir: MAP_PAGE_DIR,
    outbase: SRC,
    // Bundling is what runs the plugin; it marks every import external, so each module stays one file.
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    charset: 'utf8',
    tsconfig: join(PACKAGE, 'tsconfig.json'),
    plugins: [pageImports],
    write: false,
    logLevel: 'warning',
  });
  return new Map(result.outputFiles.map((file) => [relative(MAP_PAGE_DIR, file.path), file.contents]));
}

/** @nadir/client's browser entry, by the package's name: the files its index.js reaches. */
async function clientFiles(): Promise<Map<string, Uint8Array>> {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve('@nadir/client');
  } catch (error) {
    throw new Error(`@nadir/client is not built: build it first (npm run build): ${error}`);
  }
  const clientDir = dirname(entry);
  const graph = await build({
    absWorkingDir: clientDir,
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    metafile: true,
    write: false,
    logLevel: 'error',
  });
  const files = new Map<string, Uint8Array>();
  for (const name of Object.keys(graph.metafile.inputs).sort()) {
    // Relative imports inside the client's dist/ only: what is served under /map/client/.
    if (name.startsWith('..') || name.startsWith('/') || name.startsWith('node/') || name.includes('node_modules'))
      throw new Error(`@nadir/client's browser entry reaches ${name}, outside its own browser modules`);
    files.set(`client/${name}`, await readFile(join(clientDir, name)));
  }
  if (!files.has('client/index.js')) throw new Error(`@nadir/client's entry ${entry} is not its dist/index.js`);
  return files;
}

function occurrences(body: Uint8Array | undefined, text: string): number {
  return body === undefined ? 0 : Buffer.from(body).toString('utf8').split(text).length - 1;
}

/** Writes a file unless it already holds these bytes; whether it wrote. */
async function writeIfChanged(path: string, body: Uint8Array): Promise<boolean> {
  const old = await readFile(path).catch(() => undefined);
  if (old?.equals(body)) return false;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, body);
  return true;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

async function main(): Promise<void> {
  const page = await buildPage();
  for (const name of await readdir(STATIC)) page.set(name, await readFile(join(STATIC, name)));
  const client = await clientFiles();

  // The server fills these in: each must be there, once.
  if (occurrences(page.get(HTML), DEMO_KEY_PLACEHOLDER) !== 1)
    throw new Error(`static/${HTML} must hold ${DEMO_KEY_PLACEHOLDER} once`);
  if (occurrences(page.get(CHANGE_RAMP_FILE), CHANGE_RAMP_PLACEHOLDER) !== 1)
    throw new Error(`the built ${CHANGE_RAMP_FILE} must hold ${CHANGE_RAMP_PLACEHOLDER} once`);

  const manifest: MapPageFiles = {
    html: HTML,
    page: [...page.keys()].filter((name) => name !== HTML).sort(),
    client: [...client.keys()].map((name) => name.slice('client/'.length)),
  };
  const all = new Map([...page, ...client]);
  let written = 0;
  for (const [name, body] of all) if (await writeIfChanged(join(MAP_PAGE_DIR, name), body)) written++;
  for (const name of await filesUnder(MAP_PAGE_DIR)) {
    if (all.has(name)) continue;
    await rm(join(MAP_PAGE_DIR, name));
    written++;
  }
  if (await writeIfChanged(MAP_PAGE_MANIFEST, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`))) written++;
  if (written > 0)
    console.error(`map-page: built ${relative(process.cwd(), MAP_PAGE_DIR) || '.'} (${written} changed)`);
}

await main();
