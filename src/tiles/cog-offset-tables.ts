/**
 * A COG's tile offset tables (TileOffsets and TileByteCounts of every IFD) read in one request
 * where they lie together, as GDAL's COG layout puts them: after the IFDs, before any tile.
 * @cogeotiff/core reads each table on its own, a range request each on object storage: a shard
 * COG of 6 levels with masks cost its header read plus 17 (measured on the tile benchmark's
 * shards), a cold tile from a shard not yet open paid all of them. Now it is the header read
 * plus one; GDAL's /vsicurl/ likewise merges neighbouring ranges into one request.
 */
import { getTiffTagSize, type Source, type TagOffset, type Tiff, TiffTag } from '@cogeotiff/core';

/**
 * The widest span read at once: what lies between the tables (another IFD, a mask's tables) is
 * read too, so a span more than twice the tables' own bytes (and over 64 KiB), or over 1 MiB, is
 * not a layout to merge: each table is then read on its own, as before.
 */
function mergeable(span: number, own: number): boolean {
  return span <= Math.min(1024 * 1024, Math.max(64 * 1024, 2 * own));
}

interface Span {
  start: number;
  end: number;
}

function tableSpan(tag: TagOffset): Span {
  return { start: tag.dataOffset, end: tag.dataOffset + getTiffTagSize(tag.dataType) * tag.count };
}

/** The offset tables still to read: those the header read did not already hold. */
function unreadTables(tiff: Tiff): TagOffset[] {
  return tiff.images.flatMap((image) =>
    [TiffTag.TileOffsets, TiffTag.TileByteCounts].flatMap((id) => {
      const tag = image.tags.get(id);
      return tag?.type === 'offset' && !tag.isLoaded && tag.view === undefined ? [tag] : [];
    }),
  );
}

/**
 * Loads every IFD's tile offset tables: those the header read holds from it, the rest in one
 * read of the span they cover when it is compact, else each on its own.
 */
export async function loadOffsetTables(tiff: Tiff, source: Source): Promise<void> {
  const tables = unreadTables(tiff);
  const spans = tables.map(tableSpan);
  const start = Math.min(...spans.map((span) => span.start));
  const end = Math.max(...spans.map((span) => span.end));
  const own = spans.reduce((sum, span) => sum + span.end - span.start, 0);
  if (tables.length > 1 && mergeable(end - start, own)) {
    const bytes = await source.fetch(start, end - start);
    if (bytes.byteLength < end - start) {
      throw new Error(`offset tables: ${end - start} bytes at ${start} read as ${bytes.byteLength}`);
    }
    for (const [i, tag] of tables.entries()) {
      const span = spans[i] as Span;
      const view = new DataView(bytes, span.start - start, span.end - span.start) as DataView & {
        sourceOffset: number;
      };
      view.sourceOffset = span.start;
      tag.view = view;
    }
  }
  await Promise.all(
    tiff.images.flatMap((image) => [image.fetch(TiffTag.TileOffsets), image.fetch(TiffTag.TileByteCounts)]),
  );
}
