/**
 * Executes a tile plan: reads the planned COG tiles in draw order and composites them, stopping as
 * soon as the tile is full. The fast path is pass-through: when the first layer's single COG tile
 * IS the map tile and its mask is full, its stored JPEG is the answer, with no decode and no encode.
 */
import type { Asset } from '../catalogue/survey.js';
import { TILE_SIZE } from '../geo/web-mercator.js';
import { AnswerBuffers } from './answer-buffers.js';
import { TileCanvas } from './canvas.js';
import { type CogTileAddress, type CogTiles, type MaskedTile, TILE_PIXELS } from './cog-tiles.js';
import { contentTypeOf, type EncodedFormat, encodeTile } from './encode.js';
import { chooseLayers } from './layer-stack.js';
import type { Rotation } from './panorama.js';
import type { PlannedLayer, TileCandidate, TilePlan } from './planner.js';
import { MAX_STACK_LAYERS, type Picture, type PictureLayer } from './tile-codec.js';
import type { WorkGate } from './work-gate.js';

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
  /**
   * Call once `body` has been sent (or will not be): it lives in a buffer the renderer reuses for
   * another tile. Absent when the body is the caller's to keep. Never call it earlier.
   */
  release?: () => void;
}

/** Encoded tiles up to this size are written into reused buffers (PNG with alpha is about 150 KB). */
const ANSWER_BUFFER_BYTES = 256 * 1024;
/** Unused answer buffers kept: enough for the answers in flight at 64 connections and more. */
const ANSWER_BUFFERS_KEPT = 128;

interface Drawn {
  /** A drawn canvas, or the layers the encoder composites itself. */
  picture: Picture;
  full: boolean;
  surveyIds: string[];
  /** Called once the picture is encoded: keeps the tiles the encoder decoded into kept buffers. */
  encoded?: () => void;
}

/** True once nobody waits for the tile any more (the client closed its connection). */
export type Abandoned = () => boolean;

function throwIfAbandoned(abandoned: Abandoned | undefined): void {
  if (abandoned?.()) throw new DOMException('The client went away before its tile was drawn', 'AbortError');
}

interface LayerRead {
  address: CogTileAddress;
  read: PlannedLayer['reads'][number];
}

function layerReads(layer: PlannedLayer<AssetCandidate>): LayerRead[] {
  return layer.reads.map((read) => ({
    read,
    address: { uri: layer.file ?? layer.candidate.asset.uri, level: layer.level, col: read.col, row: read.row },
  }));
}

/** One whole COG tile drawn 1:1: the case layer-stack.ts composites without touching pixels twice. */
function isOneToOne(layer: PlannedLayer): boolean {
  const only = layer.reads.length === 1 ? layer.reads[0] : undefined;
  return layer.scale === 1 && only !== undefined && only.source.width === TILE_SIZE && only.source.height === TILE_SIZE;
}

export class TileRenderer {
  readonly #tiles: CogTiles;
  readonly #gate: WorkGate;
  readonly #buffers = new AnswerBuffers(ANSWER_BUFFER_BYTES, ANSWER_BUFFERS_KEPT);

  /** `gate`: where encodes wait for a core (shared with the decodes of `tiles`). */
  constructor(tiles: CogTiles, gate: WorkGate) {
    this.#tiles = tiles;
    this.#gate = gate;
  }

  /**
   * undefined when no layer has a single pixel for the tile (a 404). `abandoned`: the client went
   * away; map clients cancel tiles all the time while panning, and a tile nobody waits for is
   * neither composited nor encoded (decodes already under way finish: they are cached for others).
   */
  async render(
    plan: TilePlan<AssetCandidate>,
    format: TileFormat,
    rotation: Rotation,
    abandoned?: Abandoned,
  ): Promise<RenderedTile | undefined> {
    const layers = plan.layers.map(layerReads);
    // Masks are small and cached: ask for all of them at once rather than one round trip per layer.
    const masks = await Promise.all(
      layers.map((reads) => Promise.all(reads.map((r) => this.#tiles.masked(r.address)))),
    );

    const first = plan.layers[0];
    const firstTile = masks[0]?.[0];
    if (first?.passThrough && firstTile?.mask.kind === 'full' && rotation === 0 && format !== 'png') {
      const jpeg = firstTile.jpeg ?? (await this.#tiles.jpeg((layers[0] as LayerRead[])[0]?.address as CogTileAddress));
      if (jpeg)
        return { body: jpeg, contentType: 'image/jpeg', surveyIds: [first.candidate.surveyId], passThrough: true };
    }
    throwIfAbandoned(abandoned);
    const drawn = plan.layers.every(isOneToOne)
      ? await this.#stack(plan, layers, masks)
      : await this.#composite(plan, layers, masks);
    if (!drawn) return undefined;
    const encoded: EncodedFormat = format === 'jpg' || (format === 'img' && drawn.full) ? 'jpeg' : 'png';
    const into = this.#buffers.take();
    let body: Buffer;
    try {
      body = await this.#gate.run(() => {
        // Checked again once a core is free: the wait in the gate is where abandoned requests pile up.
        throwIfAbandoned(abandoned);
        return encodeTile(drawn.picture, drawn.full, encoded, rotation, into);
      });
    } catch (error) {
      this.#buffers.give(into);
      throw error;
    }
    drawn.encoded?.();
    const tile: RenderedTile = {
      body,
      contentType: contentTypeOf(encoded),
      surveyIds: drawn.surveyIds,
      passThrough: false,
    };
    if (body.buffer !== into.buffer) this.#buffers.give(into);
    else tile.release = () => this.#buffers.give(into);
    return tile;
  }

  async #stack(
    plan: TilePlan<AssetCandidate>,
    layers: LayerRead[][],
    masks: MaskedTile[][],
  ): Promise<Drawn | undefined> {
    const choice = chooseLayers(masks.map((layer) => (layer[0] as MaskedTile).mask));
    if (choice.covered === 0) return undefined;
    // More layers than the encoder composites (ragged surveys piled up): the general path draws any number.
    if (choice.used.length > MAX_STACK_LAYERS) return this.#composite(plan, layers, masks);
    const stack = await Promise.all(
      choice.used.map((index) => {
        const tile = (masks[index] as MaskedTile[])[0] as MaskedTile;
        return this.#layer(((layers[index] as LayerRead[])[0] as LayerRead).address, tile);
      }),
    );
    // A sparse imagery tile under a mask that says "data" would be a broken COG; draw it the slow, careful way.
    if (stack.some((layer) => layer === undefined)) return this.#composite(plan, layers, masks);
    const surveyIds = [
      ...new Set(choice.used.map((index) => (plan.layers[index] as PlannedLayer<AssetCandidate>).candidate.surveyId)),
    ];
    const picture = stack as PictureLayer[];
    // One whole decoded layer is its own composite.
    const first = picture[0];
    const only = picture.length === 1 && first && !first.mask && !('jpeg' in first) ? first.pixels : undefined;
    const keeps = picture.flatMap((layer, i) =>
      'jpeg' in layer && layer.pixels ? [{ index: choice.used[i] as number, pixels: layer.pixels as Buffer }] : [],
    );
    const encoded =
      keeps.length === 0
        ? undefined
        : () => {
            for (const { index, pixels } of keeps)
              this.#tiles.keep(((layers[index] as LayerRead[])[0] as LayerRead).address, pixels);
          };
    return { picture: only ?? picture, full: choice.covered === TILE_PIXELS, surveyIds, encoded };
  }

  /**
   * One layer of a stack: its decoded pixels when cached (or being decoded for another request),
   * else its stored JPEG, which the encoder decodes on its own thread straight onto the composite
   * (or into a buffer to keep, when the tile cache wants it: cog-tiles.ts). undefined: a sparse tile.
   */
  async #layer(address: CogTileAddress, tile: MaskedTile): Promise<PictureLayer | undefined> {
    const mask = tile.mask.kind === 'partial' ? tile.mask.bits : undefined;
    const cached = this.#tiles.cachedPixels(address);
    if (cached) return { pixels: cached, mask };
    const pending = this.#tiles.pendingPixels(address);
    if (pending) {
      const pixels = await pending;
      return pixels && { pixels, mask };
    }
    const jpeg = tile.jpeg ?? (await this.#tiles.jpeg(address));
    if (!jpeg) return undefined;
    const keep = this.#tiles.keepBuffer(address);
    return keep ? { jpeg, pixels: keep, mask } : { jpeg, mask };
  }

  async #composite(
    plan: TilePlan<AssetCandidate>,
    layers: LayerRead[][],
    masks: MaskedTile[][],
  ): Promise<Drawn | undefined> {
    const canvas = new TileCanvas();
    const surveyIds: string[] = [];
    for (let index = 0; index < layers.length && !canvas.full; index++) {
      const layer = plan.layers[index] as PlannedLayer<AssetCandidate>;
      const drew = await this.#drawLayer(canvas, layer, layers[index] as LayerRead[], masks[index] as MaskedTile[]);
      if (drew > 0 && !surveyIds.includes(layer.candidate.surveyId)) surveyIds.push(layer.candidate.surveyId);
    }
    return canvas.filled === 0 ? undefined : { picture: canvas.rgba, full: canvas.full, surveyIds };
  }
  async #drawLayer(
    canvas: TileCanvas,
    layer: PlannedLayer<AssetCandidate>,
    reads: LayerRead[],
    masks: MaskedTile[],
  ): Promise<number> {
    // Decodes of one layer in parallel (an underzoomed layer needs up to 16 tiles); drawing keeps order.
    const pixels = await Promise.all(
      reads.map((read, i) => {
        const tile = masks[i] as MaskedTile;
        return tile.mask.kind === 'empty' ? undefined : this.#tiles.pixels(read.address, tile.jpeg);
      }),
    );
    let drew = 0;
    for (let i = 0; i < reads.length; i++) {
      const tile = pixels[i];
      const { read } = reads[i] as LayerRead;
      if (tile) drew += canvas.draw(tile, (masks[i] as MaskedTile).mask, read.source, read.target, layer.scale);
    }
    return drew;
  }
}
