/** @nadir/client/node: the browser entry plus what needs Node (files, SQLite). */
export * from '../index.js';
export * from './area-download.js';
export * from './download.js';
export * from './file-token-store.js';
export * from './mbtiles-store.js';
export * from './pmtiles-writer.js';
export * from './tile-export.js';
export * from './vrt.js';
