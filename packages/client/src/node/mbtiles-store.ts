/**
 * An MBTiles 1.3 file (SQLite) being filled by a tile export, resumably: every tile written, and
 * every tile the server had no imagery for, is committed as it comes, so a killed export resumes
 * where it stopped. The export's parameters are kept in the metadata table and a resume with
 * other ones is refused (one file, one layer).
 */
import Database from 'better-sqlite3';
import type { TileXYZ } from '../panorama.js';
import { tileIdOf } from './pmtiles-writer.js';

/** Rows are TMS-numbered in MBTiles: row 0 is the southernmost. */
const tmsRow = (tile: TileXYZ) => 2 ** tile.z - 1 - tile.y;

export interface MbtilesMetadata {
  name: string;
  format: 'png' | 'jpg';
  /** W,S,E,N */
  bounds: string;
  minzoom: number;
  maxzoom: number;
  description: string;
}

export class MbtilesStore {
  readonly #db: Database.Database;

  constructor(path: string) {
    this.#db = new Database(path);
    this.#db.pragma('journal_mode = DELETE');
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS metadata (name TEXT NOT NULL PRIMARY KEY, value TEXT);
      CREATE TABLE IF NOT EXISTS tiles (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL,
        tile_row INTEGER NOT NULL, tile_data BLOB NOT NULL);
      CREATE UNIQUE INDEX IF NOT EXISTS tile_index ON tiles (zoom_level, tile_column, tile_row);
      -- Tiles asked for and answered 404 NO_IMAGERY: not asked again on resume.
      CREATE TABLE IF NOT EXISTS nadir_empty_tiles (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL,
        tile_row INTEGER NOT NULL, PRIMARY KEY (zoom_level, tile_column, tile_row));
    `);
  }

  metadata(name: string): string | undefined {
    const row = this.#db.prepare('SELECT value FROM metadata WHERE name = ?').get(name) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  setMetadata(values: Record<string, string | number>): void {
    const put = this.#db.prepare('INSERT OR REPLACE INTO metadata (name, value) VALUES (?, ?)');
    this.#db.transaction(() => {
      for (const [name, value] of Object.entries(values)) put.run(name, String(value));
    })();
  }

  /** Whether the tile was already fetched (written, or known to have no imagery). */
  has(tile: TileXYZ): boolean {
    const key = [tile.z, tile.x, tmsRow(tile)];
    return (
      this.#db.prepare('SELECT 1 FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?').get(...key) !==
        undefined ||
      this.#db
        .prepare('SELECT 1 FROM nadir_empty_tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?')
        .get(...key) !== undefined
    );
  }

  put(tile: TileXYZ, bytes: Uint8Array): void {
    this.#db
      .prepare('INSERT OR REPLACE INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)')
      .run(tile.z, tile.x, tmsRow(tile), Buffer.from(bytes));
  }

  markEmpty(tile: TileXYZ): void {
    this.#db.prepare('INSERT OR IGNORE INTO nadir_empty_tiles VALUES (?, ?, ?)').run(tile.z, tile.x, tmsRow(tile));
  }

  tileCount(): number {
    return (this.#db.prepare('SELECT count(*) AS n FROM tiles').get() as { n: number }).n;
  }

  /** Every tile, XYZ-numbered, in no particular order. */
  *tiles(): Generator<{ tile: TileXYZ; bytes: Buffer }> {
    const rows = this.#db
      .prepare('SELECT zoom_level AS z, tile_column AS x, tile_row AS r, tile_data AS d FROM tiles')
      .iterate();
    for (const row of rows as Iterable<{ z: number; x: number; r: number; d: Buffer }>) {
      yield { tile: { z: row.z, x: row.x, y: 2 ** row.z - 1 - row.r }, bytes: row.d };
    }
  }

  /** Tiles fetched (with imagery or without), those with imagery, and their bytes: what a resumed export has. */
  progress(): { fetched: number; written: number; bytes: number } {
    const stored = this.#db
      .prepare('SELECT count(*) AS n, coalesce(sum(length(tile_data)), 0) AS b FROM tiles')
      .get() as {
      n: number;
      b: number;
    };
    const empty = (this.#db.prepare('SELECT count(*) AS n FROM nadir_empty_tiles').get() as { n: number }).n;
    return { fetched: stored.n + empty, written: stored.n, bytes: stored.b };
  }

  /**
   * Every tile in PMTiles tile id order, one read at a time: SQLite sorts the (tile id, rowid)
   * pairs, 16 bytes a tile kept here, and each tile's bytes are read as it is handed out, so
   * a PMTiles archive is written in bounded memory whatever the export's size.
   */
  *tilesInTileIdOrder(): Generator<{ tileId: number; bytes: Buffer }> {
    this.#db.function('nadir_tile_id', { deterministic: true }, (z, x, row) =>
      tileIdOf({ z: Number(z), x: Number(x), y: 2 ** Number(z) - 1 - Number(row) }),
    );
    const sorted = this.#db
      .prepare('SELECT nadir_tile_id(zoom_level, tile_column, tile_row) AS id, rowid AS r FROM tiles ORDER BY id')
      .raw()
      .iterate() as Iterable<[number, number]>;
    // Plain arrays of numbers are packed doubles in V8: 8 bytes an element, no object per row.
    const ids: number[] = [];
    const rowids: number[] = [];
    for (const [id, rowid] of sorted) {
      ids.push(id);
      rowids.push(rowid);
    }
    const read = this.#db.prepare('SELECT tile_data FROM tiles WHERE rowid = ?').pluck();
    for (let i = 0; i < ids.length; i++) {
      yield { tileId: ids[i] as number, bytes: read.get(rowids[i]) as Buffer };
    }
  }

  close(): void {
    this.#db.close();
  }
}
