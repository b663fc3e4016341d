/**
 * A COG tile's stored bytes, read the way GDAL lays them out: its mask tile right after its
 * imagery tile (a few bytes of GDAL's ghost area between), so one read fetches both; and the
 * JPEG's tables (the TIFF JPEGTables tag) put in front of the tile's own bytes with one copy.
 * A cold composite tile needs the mask and the imagery of each layer: two reads instead of four,
 * and none of the four copies @cogeotiff/core's getTile makes of each tile.
 */
import { type TiffImage, TiffTag } from '@cogeotiff/core';
import type { CogLevel, OpenCog } from './cog-files.js';

/** TIFF Compression tag value of JPEG ("new-style" JPEG, what GDAL writes). */
const COMPRESSION_JPEG = 7;
/** Read as one when the mask starts at most this far after the imagery's end. */
const MAX_GAP_BYTES = 64 * 1024;

/** A whole JPEG from a tile's bytes: the tables (no end-of-image marker), then the tile without its start-of-image marker. */
function withTables(tables: Buffer | null, bytes: Uint8Array): Buffer {
  if (!tables) return Buffer.from(bytes);
  const jpeg = Buffer.allocUnsafe(tables.length + bytes.length - 2);
  tables.copy(jpeg, 0);
  jpeg.set(bytes.subarray(2), tables.length);
  return jpeg;
}

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
  async read(cog: OpenCog, level: CogLevel, col: number, row: number, withMask: boolean): Promise<StoredTile> {
    const stored = await readStoredTile(cog, level, col, row, withMask);
    return { jpeg: stored.imagery && withTables(this.#jpegTables(level.image), stored.imagery), mask: stored.mask };
  }
}

async function readStoredTile(
  cog: OpenCog,
  level: CogLevel,
  col: number,
  row: number,
  withMask: boolean,
): Promise<{ imagery: Uint8Array | undefined; mask: Uint8Array | undefined }> {
  const index = row * level.image.tileCount.x + col;
  const maskIfd = withMask ? level.mask : undefined;
  const [image, mask] = await Promise.all([level.image.getTileSize(index), maskIfd?.getTileSize(index)]);
  const imageEnd = image.offset + image.imageSize;
  const both =
    image.imageSize > 0 &&
    mask !== undefined &&
    mask.imageSize > 0 &&
    mask.offset >= imageEnd &&
    mask.offset - imageEnd <= MAX_GAP_BYTES;
  let imageBytes: Uint8Array | undefined;
  let maskBytes: Uint8Array | undefined;
  if (both) {
    const bytes = await cog.read(image.offset, mask.offset + mask.imageSize - image.offset);
    imageBytes = bytes.subarray(0, image.imageSize);
    maskBytes = bytes.subarray(mask.offset - image.offset);
  } else {
    [imageBytes, maskBytes] = await Promise.all([
      image.imageSize > 0 ? cog.read(image.offset, image.imageSize) : undefined,
      mask && mask.imageSize > 0 ? cog.read(mask.offset, mask.imageSize) : undefined,
    ]);
  }
  return { imagery: imageBytes, mask: maskBytes };
}
