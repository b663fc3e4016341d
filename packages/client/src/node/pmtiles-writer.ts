/**
 * Writes a PMTiles version 3 archive (https://github.com/protomaps/PMTiles/blob/main/spec/v3/spec.md,
 * written from the specification): a 127-byte header, the root directory, JSON metadata, leaf
 * directories when the root would not fit in the first 16 KiB, then the tile data ordered by
 * tile id (a "clustered" archive). Directories are stored uncompressed (internal compression
 * "none"), which every reader accepts; the tiles are PNG or JPEG as the server sent them.
 *
 * In bounded memory, whatever the export's size: the tiles stream (in tile id order) to a data
 * file beside the archive, keeping 24 bytes a tile for the directory (typed arrays); the header,
 * directories and metadata are written at the end, then the data file is copied in behind them.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { TileXYZ } from '../panorama.js';

const HEADER_BYTES = 127;
/** The header and the root directory must fit in the first 16 KiB (the spec's one read). */
const ROOT_BYTES = 16_384 - HEADER_BYTES;
const COMPRESSION_NONE = 1;
const TILE_TYPE = { png: 2, jpg: 3 } as const;

/** The tile id of z/x/y: tiles of lower zooms first, then the position on the zoom's Hilbert curve. */
export function tileIdOf(tile: TileXYZ): number {
  const { z } = tile;
  const n = 2 ** z;
  let id = (4 ** z - 1) / 3;
  let x = tile.x;
  let y = tile.y;
  for (let s = n / 2; s >= 1; s /= 2) {
    const rx = (x & s) > 0 ? 1 : 0;
    const ry = (y & s) > 0 ? 1 : 0;
    id += s * s * ((3 * rx) ^ ry);
    // Rotate the quadrant so the curve's next level runs the right way.
    if (ry === 0) {
      if (rx === 1) {
        x = n - 1 - x;
        y = n - 1 - y;
      }
      [x, y] = [y, x];
    }
  }
  return id;
}

interface Entry {
  tileId: number;
  offset: number;
  length: number;
  /** 1 for a tile; 0 for an entry pointing at a leaf directory. */
  runLength: number;
}

function varint(value: number, into: number[]): void {
  let rest = value;
  while (rest >= 0x80) {
    into.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  into.push(rest);
}

/** The spec's directory encoding: count, tile id deltas, run lengths, lengths, offsets (0 = right after the previous). */
export function encodeDirectory(entries: Entry[]): Uint8Array {
  const bytes: number[] = [];
  varint(entries.length, bytes);
  let lastId = 0;
  for (const entry of entries) {
    varint(entry.tileId - lastId, bytes);
    lastId = entry.tileId;
  }
  for (const entry of entries) varint(entry.runLength, bytes);
  for (const entry of entries) varint(entry.length, bytes);
  entries.forEach((entry, i) => {
    const previous = entries[i - 1];
    varint(previous && entry.offset === previous.offset + previous.length ? 0 : entry.offset + 1, bytes);
  });
  return Uint8Array.from(bytes);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export interface PmtilesInput {
  format: 'png' | 'jpg';
  bounds: { west: number; south: number; east: number; north: number };
  minZoom: number;
  maxZoom: number;
  metadata: Record<string, unknown>;
  /** Every tile, in ascending tile id (tileIdOf): MbtilesStore.tilesInTileIdOrder gives them so. */
  tiles: Iterable<{ tileId: number; bytes: Uint8Array }>;
}

/** Tile ids, offsets and lengths as they stream in: 24 bytes a tile, grown by doubling. */
class EntryColumns {
  ids = new Float64Array(1024);
  offsets = new Float64Array(1024);
  lengths = new Float64Array(1024);
  count = 0;

  push(id: number, offset: number, length: number): void {
    if (this.count === this.ids.length) {
      const grow = (old: Float64Array) => {
        const next = new Float64Array(old.length * 2);
        next.set(old);
        return next;
      };
      this.ids = grow(this.ids);
      this.offsets = grow(this.offsets);
      this.lengths = grow(this.lengths);
    }
    this.ids[this.count] = id;
    this.offsets[this.count] = offset;
    this.lengths[this.count] = length;
    this.count++;
  }

  /** Entries [from, to) as objects, for one directory's encoding (a leaf's worth at a time). */
  slice(from: number, to: number): Entry[] {
    const entries: Entry[] = [];
    for (let i = from; i < Math.min(to, this.count); i++) {
      entries.push({
        tileId: this.ids[i] as number,
        offset: this.offsets[i] as number,
        length: this.lengths[i] as number,
        runLength: 1,
      });
    }
    return entries;
  }
}

/**
 * The root directory, and leaves when the entries do not fit in the root: leaves of 4096
 * entries (doubled until the root that points at them fits), encoded a leaf at a time.
 */
function directories(entries: EntryColumns): { root: Uint8Array; leaves: Uint8Array } {
  if (entries.count <= 4096) {
    const root = encodeDirectory(entries.slice(0, entries.count));
    if (root.length <= ROOT_BYTES) return { root, leaves: new Uint8Array(0) };
  }
  for (let leafSize = 4096; ; leafSize *= 2) {
    const rootEntries: Entry[] = [];
    let offset = 0;
    for (let i = 0; i < entries.count; i += leafSize) {
      // Only the root is tried here; a leaf's length is its encoding's, so each is encoded now and dropped.
      const length = encodeDirectory(entries.slice(i, i + leafSize)).length;
      rootEntries.push({ tileId: entries.ids[i] as number, offset, length, runLength: 0 });
      offset += length;
    }
    const root = encodeDirectory(rootEntries);
    if (root.length > ROOT_BYTES) continue;
    const leafParts: Uint8Array[] = [];
    for (let i = 0; i < entries.count; i += leafSize) leafParts.push(encodeDirectory(entries.slice(i, i + leafSize)));
    return { root, leaves: concat(leafParts) };
  }
}

function headerBytes(input: PmtilesInput, sections: number[], tileCount: number): Uint8Array {
  const header = new DataView(new ArrayBuffer(HEADER_BYTES));
  new Uint8Array(header.buffer).set(new TextEncoder().encode('PMTiles'), 0);
  header.setUint8(7, 3);
  let at = HEADER_BYTES;
  // root, metadata, leaves, data: each an (offset, length) pair of u64s.
  for (let i = 0; i < 4; i++) {
    const length = sections[i] as number;
    header.setBigUint64(8 + i * 16, BigInt(at), true);
    header.setBigUint64(16 + i * 16, BigInt(length), true);
    at += length;
  }
  header.setBigUint64(72, BigInt(tileCount), true); // addressed tiles
  header.setBigUint64(80, BigInt(tileCount), true); // tile entries
  header.setBigUint64(88, BigInt(tileCount), true); // tile contents
  header.setUint8(96, 1); // clustered
  header.setUint8(97, COMPRESSION_NONE);
  header.setUint8(98, COMPRESSION_NONE);
  header.setUint8(99, TILE_TYPE[input.format]);
  header.setUint8(100, input.minZoom);
  header.setUint8(101, input.maxZoom);
  const e7 = (degrees: number) => Math.round(degrees * 1e7);
  const { west, south, east, north } = input.bounds;
  header.setInt32(102, e7(west), true);
  header.setInt32(106, e7(south), true);
  header.setInt32(110, e7(east), true);
  header.setInt32(114, e7(north), true);
  header.setUint8(118, input.maxZoom);
  header.setInt32(119, e7((west + east) / 2), true);
  header.setInt32(123, e7((south + north) / 2), true);
  return new Uint8Array(header.buffer);
}

/** Writes the archive to `path` (its data first to `<path>.data`, removed at the end); returns its size in bytes. */
export async function writePmtiles(path: string, input: PmtilesInput): Promise<number> {
  const dataPath = `${path}.data`;
  const entries = new EntryColumns();
  let dataLength = 0;
  try {
    const data = await open(dataPath, 'w');
    try {
      let lastId = -1;
      for (const { tileId, bytes } of input.tiles) {
        if (tileId <= lastId) throw new RangeError(`tiles must come in ascending tile id: ${tileId} after ${lastId}`);
        lastId = tileId;
        await data.write(bytes);
        entries.push(tileId, dataLength, bytes.length);
        dataLength += bytes.length;
      }
    } finally {
      await data.close();
    }
    const { root, leaves } = directories(entries);
    const metadata = new TextEncoder().encode(JSON.stringify(input.metadata));
    const header = headerBytes(input, [root.length, metadata.length, leaves.length, dataLength], entries.count);
    const archive = createWriteStream(path);
    const front = concat([header, root, metadata, leaves]);
    await new Promise<void>((resolve, reject) => archive.write(front, (error) => (error ? reject(error) : resolve())));
    await pipeline(createReadStream(dataPath), archive);
    return front.length + dataLength;
  } finally {
    await rm(dataPath, { force: true });
  }
}
