/**
 * Absolute URLs to nadir's own endpoints, as GIS documents (STAC, TileJSON, WMTS) hand them to
 * clients that only follow links. The caller's credential rides along the way it came: a key sent
 * as `apikey` in the query is put in every URL (the URL alone must then work, as in QGIS or a
 * MapLibre style); a key sent in the `Authorization` header is left out, as the client sends that
 * header itself and a URL is easier to leak than a header. Pure.
 */

export interface GisLinks {
  /** `http://host:port` (or NADIR_PUBLIC_URL), no trailing slash. */
  base: string;
  /** The key to put into URLs: present only when the caller sent it in the query. */
  apikey?: string;
}

type QueryValues = Record<string, string | number | undefined>;

/**
 * `path` on this server with `query` (undefined values left out) and the caller's key last. The
 * path is used as written, so a template keeps its `{z}`-style placeholders (URL would
 * percent-encode the braces, and clients substitute only literal ones).
 */
export function linkTo(links: GisLinks, path: string, query: QueryValues = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  if (links.apikey !== undefined) params.set('apikey', links.apikey);
  const search = params.toString();
  return `${links.base}${path}${search === '' ? '' : `?${search}`}`;
}

/** The base URL without a trailing slash. */
export function baseUrl(text: string): string {
  return text.endsWith('/') ? text.slice(0, -1) : text;
}
