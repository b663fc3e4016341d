/**
 * @nadir/map-page for the server that serves the page: where the built page is, which of its files
 * to serve, and the placeholders the server fills in. The page itself is browser code (src/),
 * built by node/build.ts into dist/page/ (see there for why it stays one file per module).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The built page: index.html, its ES modules and styles, @nadir/client's browser entry in client/. */
export const MAP_PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
/** What node/build.ts built: the list of MAP_PAGE_DIR's files (MapPageFiles). */
export const MAP_PAGE_MANIFEST = fileURLToPath(new URL('./page-files.json', import.meta.url));

/** In index.html: where the server puts the demo key's `<meta name="nadir-demo-key">`, or nothing. */
export const DEMO_KEY_PLACEHOLDER = '<!--nadir-demo-key-->';
/**
 * In change-layer.js, once: the DsmChange ramp's stops, which the server writes in as JSON (the
 * service's src/raster/change-ramp.ts is their one source).
 */
export const CHANGE_RAMP_PLACEHOLDER = 'NADIR_CHANGE_RAMP';
export const CHANGE_RAMP_FILE = 'change-layer.js';

/** The files of MAP_PAGE_DIR that make the page, relative to it; nothing else there is the page's. */
export interface MapPageFiles {
  /** The page itself (served at `/`). */
  html: string;
  /** Its ES modules and style sheets: `map.js` (the one index.html loads), `map.css`, ... */
  page: string[];
  /** @nadir/client's browser entry, relative to `client/`: `index.js` and the modules it imports. */
  client: string[];
}

/** The built page's files; a clear error when the page has not been built. */
export async function mapPageFiles(): Promise<MapPageFiles> {
  const text = await readFile(MAP_PAGE_MANIFEST, 'utf8').catch(() => {
    throw new Error(`${MAP_PAGE_MANIFEST} is missing: the map page is not built (npm run build)`);
  });
  return JSON.parse(text) as MapPageFiles;
}
