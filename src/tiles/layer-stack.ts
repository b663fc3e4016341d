/**
 * Compositing for the common case, where every layer is one whole COG tile drawn 1:1 (any zoom
 * within the surveys' own zoom ranges). Two steps:
 *
 * 1. `chooseLayers`, on the event loop, reads only the masks: which layers add pixels the layers
 *    above them left empty, stopping once the tile is full. That alone says which surveys are
 *    drawn, whether the tile is full (img: JPEG or PNG), and which COG tiles need decoding at all.
 * 2. The encoder addon paints the chosen layers bottom-up on its own thread, each overwriting with
 *    its valid pixels, so the top layer wins wherever it has data (native/tile-codec/src/stack.c).
 */
import { TILE_PIXELS, type TileMask } from './cog-tiles.js';

const MASK_BYTES = TILE_PIXELS / 8;
const BITS_SET = Uint8Array.from({ length: 256 }, (_, byte) => {
  let count = 0;
  for (let v = byte; v; v >>= 1) count += v & 1;
  return count;
});

export interface LayerChoice {
  /** Indexes of the layers that add pixels, top (drawn first) to bottom. */
  used: number[];
  /** Pixels with imagery once those layers are drawn. */
  covered: number;
}

function bitsSet(bits: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < MASK_BYTES; i++) count += BITS_SET[bits[i] as number] as number;
  return count;
}

/**
 * Masks in draw order (the first wins where several have data). The bits are only counted when a
 * second partial layer needs them: the common stack, a footprint over a whole tile, needs none.
 */
export function chooseLayers(masks: readonly TileMask[]): LayerChoice {
  const used: number[] = [];
  /** The first partial layer's bits while it is the only one; coverage is copied from it when not. */
  let first: Uint8Array | undefined;
  let coverage: Uint8Array | undefined;
  let covered = 0;
  for (let index = 0; index < masks.length && covered < TILE_PIXELS; index++) {
    const mask = masks[index] as TileMask;
    if (mask.kind === 'empty') continue;
    if (mask.kind === 'full') {
      used.push(index);
      covered = TILE_PIXELS;
      break;
    }
    if (used.length === 0) {
      first = mask.bits;
      used.push(index);
      continue;
    }
    if (coverage === undefined) {
      coverage = Uint8Array.from(first as Uint8Array);
      covered = bitsSet(coverage);
    }
    let added = 0;
    for (let i = 0; i < MASK_BYTES; i++) {
      const before = coverage[i] as number;
      const fresh = (mask.bits[i] as number) & ~before;
      if (fresh !== 0) {
        added += BITS_SET[fresh] as number;
        coverage[i] = before | fresh;
      }
    }
    if (added > 0) {
      used.push(index);
      covered += added;
    }
  }
  // One partial layer and nothing under it: its bits were never counted.
  if (covered === 0 && first !== undefined) covered = bitsSet(first);
  return { used, covered };
}
