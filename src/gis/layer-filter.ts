/**
 * The survey filters of a tile layer (`since`, `until`, `include`, `exclude`) as TileJSON and WMTS
 * take them: parsed by the same rules as the tile endpoints (catalogue/survey-filters.ts), and
 * kept as the caller wrote them, to be repeated in the tile URLs handed out, so a relative age
 * (`12M`) keeps counting from the day each tile is asked for. Pure, but for `today`.
 */
import type { TagFilter } from '../catalogue/catalogue.js';
import { parseDateRange, parseTagFilter } from '../catalogue/survey-filters.js';

export interface LayerFilterQuery {
  since?: string;
  until?: string;
  include?: string;
  exclude?: string;
}

export interface ParsedLayerFilter {
  since?: string;
  until?: string;
  tags?: TagFilter;
  /** The parameters as given, for the URLs. */
  written: LayerFilterQuery;
}

export function parseLayerFilter(query: LayerFilterQuery, today: () => string): ParsedLayerFilter {
  const { since, until } = parseDateRange(query.since, query.until, today);
  const tags = parseTagFilter(query.include, query.exclude);
  const { since: s, until: u, include, exclude } = query;
  return { since, until, tags, written: { since: s, until: u, include, exclude } };
}
