/**
 * Writes a PMTiles version 3 archive (https://github.com/protomaps/PMTiles/blob/main/spec/v3/spec.md,
 * written from the specification): a 127-byte header, the root directory, JSON metadata, leaf
 * directories when the root would not fit in the first 16 KiB, then the tile data ordered by
 * tile id (a "clustered" archive). Directories are stored uncompressed (internal compression
 * "none"), which every reader accepts; the tiles are PNG or JPEG as the server sent them.
 */
import { writeFile } from 'node:fs/promises';
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

/** The root directory, and leaves when the entries do not fit in the root. */
function directories(entries: Entry[]): { root: Uint8Array; leaves: Uint8Array } {
  const root = encodeDirectory(entries);
  if (root.length <= ROOT_BYTES) return { root, leaves: new Uint8Array(0) };
  for (let leafSize = 4096; ; leafSize *= 2) {
    const leafParts: Uint8Array[] = [];
    const rootEntries: Entry[] = [];
    let offset = 0;
    for (let i = 0; i < entries.length; i += leafSize) {
      const leaf = encodeDirectory(entries.slice(i, i + leafSize));
      rootEntries.push({ tileId: (entries[i] as Entry).tileId, offset, length: leaf.length, runLength: 0 });
      leafParts.push(leaf);
      offset += leaf.length;
    }
    const rootBytes = encodeDirectory(rootEntries);
    if (rootBytes.length <= ROOT_BYTES) return { root: rootBytes, leaves: concat(leafParts) };
  }
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
  tiles: Iterable<{ tile: TileXYZ; bytes: Uint8Array }>;
}

/** The archive's bytes. Holds the tiles in memory: exports are areas of a few hundred metres. */
export function buildPmtiles(input: PmtilesInput): Uint8Array {
  const sorted = [...input.tiles].map((t) => ({ ...t, id: tileIdOf(t.tile) })).sort((a, b) => a.id - b.id);
  const entries: Entry[] = [];
  let offset = 0;
  for (const { id, bytes } of sorted) {
    entries.push({ tileId: id, offset, length: bytes.length, runLength: 1 });
    offset += bytes.length;
  }
  const { root, leaves } = directories(entries);
  const metadata = new TextEncoder().encode(JSON.stringify(input.metadata));
  const data = concat(sorted.map((t) => t.bytes));
  const header = new DataView(new ArrayBuffer(HEADER_BYTES));
  new Uint8Array(header.buffer).set(new TextEncoder().encode('PMTiles'), 0);
  header.setUint8(7, 3);
  const sections = [HEADER_BYTES, root.length, metadata.length, leaves.length, data.length];
  let at = HEADER_BYTES;
  // root, metadata, leaves, data: each an (offset, length) pair of u64s.
  for (let i = 0; i < 4; i++) {
    const length = sections[i + 1] as number;
    header.setBigUint64(8 + i * 16, BigInt(at), true);
    header.setBigUint64(16 + i * 16, BigInt(length), true);
    at += length;
  }
  header.setBigUint64(72, BigInt(entries.length), true); // addressed tiles
  header.setBigUint64(80, BigInt(entries.length), true); // tile entries
  header.setBigUint64(88, BigInt(entries.length), true); // tile contents
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
  return concat([new Uint8Array(header.buffer), root, metadata, leaves, data]);
}

export async function writePmtiles(path: string, input: PmtilesInput): Promise<void> {
  await writeFile(path, buildPmtiles(input));
}
