import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { CHANGE_RAMP } from '../../raster/index.js';

/**
 * `GET /`: a Leaflet map over the tile endpoints (issue #5). Everything it loads comes from this
 * server, so it works offline and its Content-Security-Policy can allow 'self' only.
 */

// tsc compiles src/ to dist/ without the static files, so the page is found from the package root:
// both src/api/map-page/ and dist/api/map-page/ are three levels below it.
const PAGE_DIR = fileURLToPath(new URL('../../../src/api/map-page/page/', import.meta.url));
const LEAFLET_DIST = join(dirname(createRequire(import.meta.url).resolve('leaflet/package.json')), 'dist');
const LEAFLET_IMAGES = ['layers.png', 'layers-2x.png', 'marker-icon.png', 'marker-icon-2x.png', 'marker-shadow.png'];
const DEMO_KEY_PLACEHOLDER = '<!--nadir-demo-key-->';
/** The page's own ES modules (map.js imports the others) and styles. */
const PAGE_FILES = [
  'map.js',
  'map.css',
  'grids.js',
  'coverage-view.js',
  'tile-layers.js',
  'swipe.js',
  'area-download.js',
  'change-layer.js',
  'change-layer.css',
];
const RAMP_PLACEHOLDER = '/*nadir-change-ramp*/ [];';

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  png: 'image/png',
};

const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // The page's @nadir/client calls this server (coverage, tiles, imagery) with fetch.
  "connect-src 'self'",
  // data: for Leaflet's transparent error tile.
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// @nadir/client's compiled browser entry: the page imports it as it is (relative ES imports).
const CLIENT_DIST = dirname(createRequire(import.meta.url).resolve('@nadir/client'));
const RELATIVE_IMPORT = /^\s*(?:import|export)\s[^;]*?\sfrom\s+'(\.\/[\w./-]+\.js)'/gm;

/**
 * The files of the client's browser entry, found by following its relative imports from index.js
 * (type-only imports are gone from the compiled code), so only what the browser needs is served
 * and never the Node half (dist/node/).
 */
export async function browserClientFiles(): Promise<string[]> {
  const found = new Set<string>();
  const queue = ['index.js'];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (found.has(name)) continue;
    found.add(name);
    const text = await readFile(join(CLIENT_DIST, name), 'utf8').catch(() => {
      throw new Error(`${join(CLIENT_DIST, name)} is missing: build @nadir/client first (npm run build)`);
    });
    for (const [, path] of text.matchAll(RELATIVE_IMPORT)) {
      const target = join(dirname(name), path!);
      if (target.startsWith('..') || target.startsWith('node/'))
        throw new Error(`unexpected import ${path} in ${name}`);
      queue.push(target);
    }
  }
  return [...found].sort();
}

export interface MapPageOptions {
  /** Written by `nadir demo`; pre-fills the key input when present. */
  demoApiKey?: string;
}

/** The demo account's key from `<dataDir>/demo-api-key`, or undefined when `nadir demo` has not run. */
export async function readDemoApiKey(dataDir: string): Promise<string | undefined> {
  const saved = await readFile(join(dataDir, 'demo-api-key'), 'utf8').catch(() => '');
  return saved.trim() || undefined;
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface StaticFile {
  body: Buffer | string;
  type: string;
  cacheControl: string;
}

/** Fixed routes for a fixed list of files: no path parameter, so nothing to traverse with. */
export async function registerMapPage(app: FastifyInstance, options: MapPageOptions = {}): Promise<void> {
  const html = await readFile(join(PAGE_DIR, 'index.html'), 'utf8');
  const meta = options.demoApiKey
    ? `<meta name="nadir-demo-key" content="${escapeAttribute(options.demoApiKey)}">`
    : '';
  // The page holds a key when there is a demo one: not for shared caches.
  const files = new Map<string, StaticFile>([
    ['/', { body: html.replace(DEMO_KEY_PLACEHOLDER, meta), type: TYPES.html!, cacheControl: 'private, no-cache' }],
  ]);
  for (const name of PAGE_FILES) {
    let body: Buffer | string = await readFile(join(PAGE_DIR, name));
    // The DsmChange legend draws the ramp the tiles are coloured with.
    if (name === 'change-layer.js')
      body = body.toString('utf8').replace(RAMP_PLACEHOLDER, `${JSON.stringify(CHANGE_RAMP)};`);
    files.set(`/map/${name}`, { body, type: TYPES[name.split('.').pop()!]!, cacheControl: 'no-cache' });
  }
  const leaflet = [...['leaflet.js', 'leaflet.css'], ...LEAFLET_IMAGES.map((name) => `images/${name}`)];
  for (const name of leaflet) {
    const body = await readFile(join(LEAFLET_DIST, name));
    files.set(`/map/leaflet/${name}`, {
      body,
      type: TYPES[name.split('.').pop()!]!,
      cacheControl: 'public, max-age=86400',
    });
  }

  for (const name of await browserClientFiles()) {
    const body = await readFile(join(CLIENT_DIST, name));
    files.set(`/map/client/${name}`, { body, type: TYPES.js!, cacheControl: 'no-cache' });
  }

  for (const [url, file] of files) {
    app.get(url, { schema: { hide: true } }, async (_request, reply) => {
      reply.header('cache-control', file.cacheControl).header('x-content-type-options', 'nosniff');
      if (file.type === TYPES.html) reply.header('content-security-policy', PAGE_CSP);
      return reply.type(file.type).send(file.body);
    });
  }
}
