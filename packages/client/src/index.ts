/**
 * @nadir/client, the browser-safe entry: fetch only, no Node modules, and only relative imports
 * in the compiled dist/ (so a page can load dist/index.js as an ES module as it is). Node's extras
 * (a file token store, downloads to files, tile exports, the CLI) are in `@nadir/client/node`.
 */
export * from './area.js';
export * from './area-grid.js';
export type { DsmChangeFiguresRequest, DsmChangeTileRequest } from './change.js';
export * from './client.js';
export * from './errors.js';
export type { TileJson, TileJsonRequest, WmtsFilters, WmtsTileRequest } from './gis.js';
export * from './panorama.js';
export * from './plan.js';
export type { CoverageOptions, DateFilters, TagFilters } from './query.js';
export * from './retry.js';
export type {
  StacAsset,
  StacCollection,
  StacItem,
  StacItemCollection,
  StacLanding,
  StacLink,
  StacSearchOptions,
} from './stac.js';
export * from './tile-grid.js';
export * from './tile-pacer.js';
export * from './token-store.js';
export * from './types.js';
export * from './waiting.js';
