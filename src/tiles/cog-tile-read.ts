/**
 * A COG tile's stored bytes, read the way GDAL lays them out: its mask tile right after its
 * imagery tile (a few bytes of GDAL's ghost area between), so one read fetches both; and the
 * JPEG's tables (the TIFF JPEGTables tag) in front of the tile's own bytes, read straight behind
 * them. A cold composite tile needs the mask and the imagery of each layer: two reads instead of
 * four, and one buffer per layer instead of the four copies @cogeotiff/core's getTile makes of each
 * tile (under cold load, each buffer allocated per tile was work for V8's garbage collector).
 */
import { type TiffImage, TiffTag } from '@cogeotiff/core';
import type { CogLevel, OpenCog } from './cog-files.js';

/** TIFF Compression tag value of JPEG ("new-style" JPEG, what GDAL writes). */
const COMPRESSION_JPEG = 7;
/** Read as one when the mask starts at most this far after the imagery's end. */
const MAX_GAP_BYTES = 64 * 1024;

/** Whether this reader handles the level's imagery (JPEG tiles, as nadir's ingest writes them). */
export function readsImagery(level: CogLevel): boolean {
  return level.image.value(TiffTag.Compression) === COMPRESSION_JPEG && level.image.tileSize != null;
}

export interface StoredTile {
  /** The imagery as a whole JPEG; undefined when the tile is sparse. */
  jpeg: Buffer | undefined;
  /** The mask tile as stored (compressed); undefined when sparse or when not asked for. */
  mask: Uint8Array | undefined;
}

/** Reads stored tiles; keeps each IFD's JPEG tables ready to put in front of its tiles (one reader per CogTiles). */
export class StoredTileReader {
  /** The JPEGTables of an IFD without its end-of-image marker; dropped with the IFD. */
  readonly #tables = new WeakMap<TiffImage, Buffer | null>();

  #jpegTables(image: TiffImage): Buffer | null {
    let tables = this.#tables.get(image);
    if (tables === undefined) {
      const value = image.value(TiffTag.JpegTables) as ArrayLike<number> | null | undefined;
      tables = value ? Buffer.from(Array.from(value).slice(0, value.length - 2)) : null;
      this.#tables.set(image, tables);
    }
    return tables;
  }

  /** The imagery tile (col, row) of `level` and, with `withMask`, its mask tile, in as few reads as the layout allows. */
  read(cog: OpenCog, level: CogLevel, col: number, row: number, withMask: boolean): Promise<StoredTile> {
    return readStoredTile(cog, level, col, row, withMask, this.#jpegTables(level.image));
  }
}

/** Where a tile's bytes start behind the tables: on their last two bytes (the end-of-image marker). */
function tablesFront(tables: Buffer | null): number {
  return tables ? tables.length - 2 : 0;
}

/**
 * Reads `length` bytes at `offset` into a new buffer behind the JPEG tables (when the level has
 * them), so that the tables and the tile's bytes are one whole JPEG without copying the tile: the
 * tile's own start-of-image marker lands on the tables' last two bytes, and the tables are
 * written over it.
 */
async function readBehindTables(cog: OpenCog, tables: Buffer | null, offset: number, length: number): Promise<Buffer> {
  const front = tablesFront(tables);
  const bytes = Buffer.allocUnsafeSlow(front + length);
  await cog.readInto(offset, bytes.subarray(front));
  tables?.copy(bytes, 0);
  return bytes;
}

async function readStoredTile(
  cog: OpenCog,
  level: CogLevel,
  col: number,
  row: number,
  withMask: boolean,
  tables: Buffer | null,
): Promise<StoredTile> {
  const index = row * level.image.tileCount.x + col;
  const maskIfd = withMask ? level.mask : undefined;
  const [image, mask] = await Promise.all([level.image.getTileSize(index), maskIfd?.getTileSize(index)]);
  const imageEnd = image.offset + image.imageSize;
  const front = tablesFront(tables);
  const both =
    image.imageSize > 0 &&
    mask !== undefined &&
    mask.imageSize > 0 &&
    mask.offset >= imageEnd &&
    mask.offset - imageEnd <= MAX_GAP_BYTES;
  if (both) {
    // The mask's bytes stay in the same buffer as the JPEG (a cached JPEG keeps those few KiB too).
    const bytes = await readBehindTables(cog, tables, image.offset, mask.offset + mask.imageSize - image.offset);
    return {
      jpeg: bytes.subarray(0, front + image.imageSize),
      mask: bytes.subarray(front + mask.offset - image.offset),
    };
  }
  const [jpeg, maskBytes] = await Promise.all([
    image.imageSize > 0 ? readBehindTables(cog, tables, image.offset, image.imageSize) : undefined,
    mask && mask.imageSize > 0 ? cog.read(mask.offset, mask.imageSize) : undefined,
  ]);
  return { jpeg, mask: maskBytes };
}
