import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mulberry32 } from '@nadir/demo-town/random';
import sharp from 'sharp';
import { TileCanvas } from '../../src/tiles/canvas.js';
import type { TileMask } from '../../src/tiles/cog-tiles.js';
import { encodeTile } from '../../src/tiles/encode.js';
import { chooseLayers } from '../../src/tiles/layer-stack.js';
import { encodeJpeg, encodePng, MAX_STACK_LAYERS } from '../../src/tiles/tile-codec.js';

const N = 256;
const whole = { x: 0, y: 0, width: N, height: N };

function layerPixels(seed: number): Buffer {
  const random = mulberry32(seed);
  const pixels = Buffer.alloc(N * N * 4);
  for (let i = 0; i < N * N; i++) {
    pixels.set([Math.floor(random() * 256), Math.floor(random() * 256), Math.floor(random() * 256), 255], i * 4);
  }
  return pixels;
}

function maskOf(inside: (x: number, y: number) => boolean): TileMask {
  const bits = new Uint8Array((N * N) / 8);
  let count = 0;
  for (let y = 0; y < N; y++) {
    for (let x = 0; x < N; x++) {
      const i = y * N + x;
      if (inside(x, y)) {
        bits[i >> 3] = (bits[i >> 3] as number) | (0x80 >> (i & 7));
        count++;
      }
    }
  }
  if (count === 0) return { kind: 'empty' };
  if (count === N * N) return { kind: 'full' };
  return { kind: 'partial', bits };
}

/** Footprint-like masks: half-planes, discs, speckle and stripes, so runs start and stop anywhere. */
function randomMask(random: () => number): TileMask {
  const kind = Math.floor(random() * 5);
  const a = random() * N;
  const b = random() * N;
  if (kind === 0) return maskOf((x, y) => x + y * (random() < 0 ? 0 : 0.3) < a);
  if (kind === 1) return maskOf((x, y) => Math.hypot(x - a, y - b) < 40 + random() * 0);
  if (kind === 2) return maskOf((x, y) => ((x * 2654435761) ^ (y * 40503)) % 7 < 3);
  if (kind === 3) return maskOf((x) => Math.floor((x + a) / 13) % 2 === 0);
  return random() < 0.5 ? { kind: 'full' } : { kind: 'empty' };
}

describe('chooseLayers', () => {
  it('keeps only layers that add pixels, and stops once the tile is full', () => {
    const left = maskOf((x) => x < 100);
    const alsoLeft = maskOf((x) => x < 50);
    const right = maskOf((x) => x >= 100);
    assert.deepEqual(chooseLayers([left, alsoLeft, right, { kind: 'full' }]), { used: [0, 2], covered: N * N });
    assert.deepEqual(chooseLayers([{ kind: 'empty' }, left]), { used: [1], covered: 100 * N });
    assert.deepEqual(chooseLayers([{ kind: 'full' }, left]), { used: [0], covered: N * N });
    assert.deepEqual(chooseLayers([]), { used: [], covered: 0 });
  });
});

describe('stacks composited by the encoder', () => {
  /** The stack's composite as the encoder sees it: a lossless PNG with alpha, decoded again. */
  async function composited(layers: { pixels: Buffer; mask: TileMask }[]): Promise<Buffer> {
    const picture = layers.map(({ pixels, mask }) => ({
      pixels,
      mask: mask.kind === 'partial' ? mask.bits : undefined,
    }));
    return sharp(await encodePng(picture, N, true, 'runs', 0, 'paeth'))
      .raw()
      .toBuffer();
  }

  it('gives exactly what drawing newest first into the empty pixels gives (200 random stacks)', async () => {
    const random = mulberry32(7);
    for (let trial = 0; trial < 200; trial++) {
      const count = 1 + Math.floor(random() * 4);
      const layers = Array.from({ length: count }, (_, i) => ({
        pixels: layerPixels(trial * 10 + i),
        mask: randomMask(random),
      }));
      const canvas = new TileCanvas();
      for (const layer of layers) canvas.draw(layer.pixels, layer.mask, whole, whole, 1);
      const choice = chooseLayers(layers.map((l) => l.mask));
      assert.equal(choice.covered, canvas.filled, `trial ${trial}: coverage`);
      if (choice.used.length === 0) continue;
      const stacked = await composited(choice.used.map((i) => layers[i] as (typeof layers)[number]));
      assert.ok(stacked.equals(canvas.rgba), `trial ${trial}: pixels`);
    }
  });

  it('JPEG composites the same stack: within JPEG tolerance of the PNG, turned alike', async () => {
    const layers = [
      { pixels: layerPixels(1).fill(200), mask: maskOf((x) => x < 128) },
      { pixels: layerPixels(2).fill(40), mask: { kind: 'full' } as TileMask },
    ];
    const picture = layers.map(({ pixels, mask }) => ({
      pixels,
      mask: mask.kind === 'partial' ? mask.bits : undefined,
    }));
    const jpeg = await sharp(await encodeJpeg(picture, N, 85, 90))
      .raw()
      .toBuffer();
    // Turned a quarter clockwise, the left half (the top layer) is the top half.
    assert.ok(Math.abs((jpeg[(10 * N + 100) * 3] as number) - 200) < 4, 'top half from the top layer');
    assert.ok(Math.abs((jpeg[(240 * N + 100) * 3] as number) - 40) < 4, 'bottom half from the bottom layer');
  });

  const pixels = Buffer.alloc(N * N * 4);
  const half = new Uint8Array((N * N) / 8).fill(0xf0);
  const bad: [string, () => unknown, typeof TypeError | typeof RangeError][] = [
    ['no layers', () => encodePng([], N, true, 'runs', 0), RangeError],
    [
      '17 layers',
      () => encodePng(Array(MAX_STACK_LAYERS + 1).fill({ pixels, mask: half }), N, true, 'runs', 0),
      RangeError,
    ],
    ['a short mask', () => encodeJpeg([{ pixels, mask: half.subarray(1) }], N, 85, 0), RangeError],
    ['a short layer', () => encodeJpeg([{ pixels: pixels.subarray(4), mask: half }], N, 85, 0), RangeError],
    ['a mask that is not bytes', () => encodeJpeg([{ pixels, mask: [1] as never }], N, 85, 0), TypeError],
    ['a size not a multiple of 8', () => encodeJpeg([{ pixels: Buffer.alloc(100 * 4) }], 10, 85, 0), RangeError],
  ];
  for (const [what, call, type] of bad) {
    it(`throws a ${type.name} at once for ${what}`, () => assert.throws(call, type));
  }
});

describe('encodeTile', () => {
  /** A tile with one red block near the top-left corner. */
  function marked(): Buffer {
    const rgba = Buffer.alloc(N * N * 4);
    for (let y = 0; y < N; y++) {
      for (let x = 0; x < N; x++) {
        const red = x >= 16 && x < 48 && y >= 16 && y < 48;
        rgba.set(red ? [255, 0, 0, 255] : [0, 0, 255, 255], (y * N + x) * 4);
      }
    }
    return rgba;
  }

  async function redCentre(body: Buffer): Promise<[number, number]> {
    const { data } = await sharp(body).raw().toBuffer({ resolveWithObject: true });
    let sx = 0;
    let sy = 0;
    let n = 0;
    for (let i = 0; i < N * N; i++) {
      if ((data[i * 3] as number) > 200 && (data[i * 3 + 2] as number) < 60) {
        sx += i % N;
        sy += Math.floor(i / N);
        n++;
      }
    }
    return [Math.round(sx / n), Math.round(sy / n)];
  }

  it('turns the picture clockwise: 90 puts the top-left corner top-right, 270 bottom-left', async () => {
    assert.deepEqual(await redCentre(await encodeTile(marked(), true, 'png', 0)), [32, 32]);
    assert.deepEqual(await redCentre(await encodeTile(marked(), true, 'png', 90)), [224, 32]);
    assert.deepEqual(await redCentre(await encodeTile(marked(), true, 'png', 180)), [224, 224]);
    assert.deepEqual(await redCentre(await encodeTile(marked(), true, 'png', 270)), [32, 224]);
  });

  it('PNG keeps transparency where nothing was drawn; JPEG and a full PNG have no alpha', async () => {
    const rgba = marked();
    rgba.fill(0, 0, N * 4);
    const partial = await sharp(await encodeTile(rgba, false, 'png', 0)).metadata();
    assert.equal(partial.channels, 4);
    assert.equal((await sharp(await encodeTile(marked(), true, 'png', 0)).metadata()).channels, 3);
    const jpeg = await sharp(await encodeTile(rgba, false, 'jpeg', 0)).metadata();
    assert.equal(jpeg.format, 'jpeg');
    assert.equal(jpeg.channels, 3);
  });
});
