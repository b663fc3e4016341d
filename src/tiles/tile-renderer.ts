/**
 * Executes a tile plan: reads the planned COG tiles in draw order and composites them, stopping as
 * soon as the tile is full. The fast path is pass-through: when the first layer's single COG tile
 * IS the map tile and its mask is full, its stored JPEG is the answer, with no decode and no encode.
 */
import type { Asset } from '../catalogue/survey.js';
import { TileCanvas } from './canvas.js';
import type { CogTileAddress, CogTiles, TileMask } from './cog-tiles.js';
import { contentTypeOf, type EncodedFormat, encodeCanvas } from './encode.js';
import type { Rotation } from './panorama.js';
import type { PlannedLayer, TileCandidate, TilePlan } from './planner.js';

/** What a client asks for: `img` is JPEG when the tile is full and PNG when it is partial. */
export type TileFormat = 'jpg' | 'png' | 'img';
export const TILE_FORMATS: readonly TileFormat[] = ['jpg', 'png', 'img'];

/** A candidate the renderer can read: the catalogue's asset carries the COG's URI. */
export interface AssetCandidate extends TileCandidate {
  asset: Asset;
}

export interface RenderedTile {
  body: Buffer;
  contentType: 'image/jpeg' | 'image/png';
  /** Surveys that drew at least one pixel, in draw order. */
  surveyIds: string[];
  /** Sent as stored in the COG. */
  passThrough: boolean;
}

interface LayerRead {
  address: CogTileAddress;
  read: PlannedLayer['reads'][number];
}

function layerReads(layer: PlannedLayer<AssetCandidate>): LayerRead[] {
  return layer.reads.map((read) => ({
    read,
    address: { uri: layer.candidate.asset.uri, level: layer.level, col: read.col, row: read.row },
  }));
}

export class TileRenderer {
  readonly #tiles: CogTiles;

  constructor(tiles: CogTiles) {
    this.#tiles = tiles;
  }

  /** undefined when no layer has a single pixel for the tile (a 404). */
  async render(
    plan: TilePlan<AssetCandidate>,
    format: TileFormat,
    rotation: Rotation,
  ): Promise<RenderedTile | undefined> {
    const layers = plan.layers.map(layerReads);
    // Masks are small and cached: ask for all of them at once rather than one round trip per layer.
    const masks = await Promise.all(layers.map((reads) => Promise.all(reads.map((r) => this.#tiles.mask(r.address)))));

    const first = plan.layers[0];
    const firstMask = masks[0]?.[0];
    if (first?.passThrough && firstMask?.kind === 'full' && rotation === 0 && format !== 'png') {
      const jpeg = await this.#tiles.jpeg((layers[0] as LayerRead[])[0]?.address as CogTileAddress);
      if (jpeg)
        return { body: jpeg, contentType: 'image/jpeg', surveyIds: [first.candidate.surveyId], passThrough: true };
    }

    const canvas = new TileCanvas();
    const surveyIds: string[] = [];
    for (let index = 0; index < layers.length && !canvas.full; index++) {
      const layer = plan.layers[index] as PlannedLayer<AssetCandidate>;
      const drew = await this.#drawLayer(canvas, layer, layers[index] as LayerRead[], masks[index] as TileMask[]);
      if (drew > 0 && !surveyIds.includes(layer.candidate.surveyId)) surveyIds.push(layer.candidate.surveyId);
    }
    if (canvas.filled === 0) return undefined;

    canvas.rotate(rotation);
    const encoded: EncodedFormat = format === 'jpg' || (format === 'img' && canvas.full) ? 'jpeg' : 'png';
    const body = await encodeCanvas(canvas, encoded);
    return { body, contentType: contentTypeOf(encoded), surveyIds, passThrough: false };
  }

  async #drawLayer(
    canvas: TileCanvas,
    layer: PlannedLayer<AssetCandidate>,
    reads: LayerRead[],
    masks: TileMask[],
  ): Promise<number> {
    // Decodes of one layer in parallel (an underzoomed layer needs up to 16 tiles); drawing keeps order.
    const wanted = reads.map((read, i) => ((masks[i] as TileMask).kind === 'empty' ? undefined : read));
    const pixels = await Promise.all(wanted.map((read) => (read ? this.#tiles.pixels(read.address) : undefined)));
    let drew = 0;
    for (let i = 0; i < reads.length; i++) {
      const tile = pixels[i];
      const { read } = reads[i] as LayerRead;
      if (tile) drew += canvas.draw(tile, masks[i] as TileMask, read.source, read.target, layer.scale);
    }
    return drew;
  }
}
