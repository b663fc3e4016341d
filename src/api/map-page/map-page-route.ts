import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { CHANGE_RAMP } from '../../raster/index.js';

/**
 * `GET /`: a Leaflet map over the tile endpoints (issue #5). Everything it loads comes from this
 * server, so it works offline and its Content-Security-Policy can allow 'self' only.
 *
 * The page is its own workspace package, @nadir/map-page (packages/map-page: TypeScript over
 * @nadir/client, built by `npm run build`); what is served is its build output, found through the
 * package's entry: its folder, the list of its files (@nadir/client's browser modules among them,
 * under client/) and the placeholders this server fills in.
 */
type MapPage = typeof import('@nadir/map-page');

const LEAFLET_DIST = join(dirname(createRequire(import.meta.url).resolve('leaflet/package.json')), 'dist');
const LEAFLET_IMAGES = ['layers.png', 'layers-2x.png', 'marker-icon.png', 'marker-icon-2x.png', 'marker-shadow.png'];
/** MapLibre GL's ES build, for the 3D view (terrain.html): its module, the two it loads, its styles. */
const MAPLIBRE_DIST = join(dirname(createRequire(import.meta.url).resolve('maplibre-gl/package.json')), 'dist');
const MAPLIBRE_FILES = ['maplibre-gl.mjs', 'maplibre-gl-shared.mjs', 'maplibre-gl-worker.mjs', 'maplibre-gl.css'];

/**
 * The package's entry, imported when the page is set up rather than with this module, so that a
 * server whose page was never built says so instead of failing to load at all.
 */
async function mapPage(): Promise<MapPage> {
  try {
    return await import('@nadir/map-page');
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error(`@nadir/map-page is not built (packages/map-page/dist/): run npm run build (${error})`);
  }
}

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
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

/**
 * @nadir/client's browser entry as the page serves it under `/map/client/`: `index.js` and the
 * modules it imports (the map page's build lists them), never the client's Node half.
 */
export async function browserClientFiles(): Promise<string[]> {
  return (await (await mapPage()).mapPageFiles()).client;
}

export interface MapPageOptions {
  /** Written by `nadir demo`; pre-fills the key input when present. */
  demoApiKey?: string;
  /** An XYZ template drawn under the imagery (NADIR_MAP_BASEMAP), and its credit. */
  basemap?: { url: string; attribution: string };
}

/** The page's policy, with the basemap's origin among the image sources when there is one. */
function pageCsp(basemap: MapPageOptions['basemap']): string {
  if (!basemap) return PAGE_CSP;
  const origin = new URL(basemap.url.replace(/[{}]/g, '')).origin;
  return PAGE_CSP.replace("img-src 'self' data:", `img-src 'self' data: ${origin}`);
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

/** The built page's file, with a clear error when the build left it out. */
async function pageFile(page: MapPage, name: string): Promise<Buffer> {
  return readFile(join(page.MAP_PAGE_DIR, name)).catch(() => {
    throw new Error(`${join(page.MAP_PAGE_DIR, name)} is missing: the map page is not built (npm run build)`);
  });
}

/** Fills in the page's placeholder, which the page's build checked is there once. */
function fillIn(text: string, placeholder: string, value: string, file: string): string {
  if (!text.includes(placeholder)) throw new Error(`${file} of @nadir/map-page has no ${placeholder}`);
  return text.replace(placeholder, () => value);
}

/** Fixed routes for a fixed list of files: no path parameter, so nothing to traverse with. */
export async function registerMapPage(app: FastifyInstance, options: MapPageOptions = {}): Promise<void> {
  const page = await mapPage();
  const built = await page.mapPageFiles();
  const html = (await pageFile(page, built.html)).toString('utf8');
  const metas: string[] = [];
  if (options.demoApiKey) metas.push(`<meta name="nadir-demo-key" content="${escapeAttribute(options.demoApiKey)}">`);
  if (options.basemap) {
    metas.push(`<meta name="nadir-basemap" content="${escapeAttribute(options.basemap.url)}">`);
    metas.push(`<meta name="nadir-basemap-attribution" content="${escapeAttribute(options.basemap.attribution)}">`);
  }
  const meta = metas.join('\n');
  const csp = pageCsp(options.basemap);
  // The page holds a key when there is a demo one: not for shared caches.
  const files = new Map<string, StaticFile>([
    [
      '/',
      {
        body: fillIn(html, page.DEMO_KEY_PLACEHOLDER, meta, built.html),
        type: TYPES.html!,
        cacheControl: 'private, no-cache',
      },
    ],
  ]);
  // The page's own ES modules (map.js imports the others) and styles, then the client's modules.
  const served = [...built.page, ...built.client.map((name) => `client/${name}`)];
  for (const name of served) {
    let body: Buffer | string = await pageFile(page, name);
    // Other pages (the 3D view) take the demo key as the map does.
    if (name.endsWith('.html') && body.includes(page.DEMO_KEY_PLACEHOLDER))
      body = fillIn(body.toString('utf8'), page.DEMO_KEY_PLACEHOLDER, meta, name);
    // The DsmChange legend draws the ramp the tiles are coloured with.
    if (name === page.CHANGE_RAMP_FILE)
      body = fillIn(body.toString('utf8'), page.CHANGE_RAMP_PLACEHOLDER, JSON.stringify(CHANGE_RAMP), name);
    const cacheControl = name.endsWith('.html') && options.demoApiKey ? 'private, no-cache' : 'no-cache';
    files.set(`/map/${name}`, { body, type: TYPES[name.split('.').pop()!]!, cacheControl });
  }
  for (const name of MAPLIBRE_FILES) {
    files.set(`/map/maplibre/${name}`, {
      body: await readFile(join(MAPLIBRE_DIST, name)),
      type: TYPES[name.split('.').pop()!]!,
      cacheControl: 'public, max-age=86400',
    });
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

  for (const [url, file] of files) {
    app.get(url, { schema: { hide: true } }, async (_request, reply) => {
      reply.header('cache-control', file.cacheControl).header('x-content-type-options', 'nosniff');
      if (file.type === TYPES.html) reply.header('content-security-policy', csp);
      return reply.type(file.type).send(file.body);
    });
  }
}
