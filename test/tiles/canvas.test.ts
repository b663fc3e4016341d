import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TileCanvas } from '../../src/tiles/canvas.js';
import type { TileMask } from '../../src/tiles/cog-tiles.js';

const N = 256;
const whole = { x: 0, y: 0, width: N, height: N };
const FULL: TileMask = { kind: 'full' };

/** RGB where every pixel encodes its own position: r = x, g = y, b = `tag`. */
/** Decoded tiles are RGBA with alpha 255, as CogTiles returns them. */
function positional(tag: number): Buffer {
  const pixels = Buffer.alloc(N * N * 4);
  for (let y = 0; y < N; y++) {
    for (let x = 0; x < N; x++) pixels.set([x, y, tag, 255], (y * N + x) * 4);
  }
  return pixels;
}

function solid(r: number, g: number, b: number): Buffer {
  const pixels = Buffer.alloc(N * N * 4);
  for (let i = 0; i < N * N; i++) pixels.set([r, g, b, 255], i * 4);
  return pixels;
}

/** A mask valid where `inside(x, y)`, packed as the COG stores it (MSB first). */
function maskOf(inside: (x: number, y: number) => boolean): TileMask {
  const bits = new Uint8Array((N * N) / 8);
  for (let y = 0; y < N; y++) {
    for (let x = 0; x < N; x++) {
      const i = y * N + x;
      if (inside(x, y)) bits[i >> 3] = (bits[i >> 3] as number) | (0x80 >> (i & 7));
    }
  }
  return { kind: 'partial', bits };
}

function pixel(canvas: TileCanvas, x: number, y: number): number[] {
  const i = (y * N + x) * 4;
  return [...canvas.rgba.subarray(i, i + 4)];
}

describe('TileCanvas', () => {
  it('copies a full tile 1:1', () => {
    const canvas = new TileCanvas();
    assert.equal(canvas.draw(positional(7), FULL, whole, whole, 1), N * N);
    assert.ok(canvas.full);
    assert.deepEqual(pixel(canvas, 0, 0), [0, 0, 7, 255]);
    assert.deepEqual(pixel(canvas, 200, 13), [200, 13, 7, 255]);
  });

  it('draws only where the mask is set, and later layers fill only what is still empty', () => {
    const canvas = new TileCanvas();
    const left = maskOf((x) => x < 100);
    assert.equal(canvas.draw(solid(200, 0, 0), left, whole, whole, 1), 100 * N);
    assert.ok(!canvas.full);
    assert.deepEqual(pixel(canvas, 150, 10), [0, 0, 0, 0], 'outside the mask nothing is drawn');
    // The older layer covers everything but must not paint over the newer one.
    assert.equal(canvas.draw(solid(0, 0, 200), FULL, whole, whole, 1), (N - 100) * N);
    assert.ok(canvas.full);
    assert.deepEqual(pixel(canvas, 99, 10), [200, 0, 0, 255]);
    assert.deepEqual(pixel(canvas, 100, 10), [0, 0, 200, 255]);
  });

  it('an empty mask draws nothing', () => {
    const canvas = new TileCanvas();
    assert.equal(canvas.draw(solid(1, 2, 3), { kind: 'empty' }, whole, whole, 1), 0);
    assert.equal(canvas.filled, 0);
  });

  it('shrinks below minZoom: a 2x block average lands in its quarter of the tile', () => {
    const canvas = new TileCanvas();
    const target = { x: 128, y: 0, width: 128, height: 128 };
    assert.equal(canvas.draw(positional(9), FULL, whole, target, 2), 128 * 128);
    // Output (128 + i, j) averages source x in {2i, 2i+1}, y in {2j, 2j+1}.
    assert.deepEqual(pixel(canvas, 128, 0), [1, 1, 9, 255]);
    assert.deepEqual(pixel(canvas, 128 + 10, 20), [21, 41, 9, 255]);
    assert.deepEqual(pixel(canvas, 0, 0), [0, 0, 0, 0], 'the other quarters stay empty');
    assert.deepEqual(pixel(canvas, 200, 200), [0, 0, 0, 0]);
  });

  it('a shrunk pixel is drawn only when at least half of its block is valid, averaging the valid ones', () => {
    const canvas = new TileCanvas();
    // 4x shrink; valid source columns x % 4 < 2 (half of each block) except x >= 128 where x % 4 === 0 (a quarter).
    const mask = maskOf((x) => (x < 128 ? x % 4 < 2 : x % 4 === 0));
    canvas.draw(positional(0), mask, whole, { x: 0, y: 0, width: 64, height: 64 }, 4);
    // Block (0, 0): valid x 0, 1 over y 0..3 -> mean x 0.5 (rounds to 1), mean y 1.5 (rounds to 2).
    assert.deepEqual(pixel(canvas, 0, 0), [1, 2, 0, 255]);
    assert.deepEqual(pixel(canvas, 40, 0), [0, 0, 0, 0], 'a quarter-valid block stays empty');
  });

  it('keeps a black pixel of imagery apart from an empty one', () => {
    const canvas = new TileCanvas();
    canvas.draw(
      solid(0, 0, 0),
      maskOf((x) => x === 0),
      whole,
      whole,
      1,
    );
    assert.deepEqual([...canvas.rgba.subarray(0, 8)], [0, 0, 0, 255, 0, 0, 0, 0]);
    canvas.draw(solid(9, 9, 9), FULL, whole, whole, 1);
    assert.deepEqual([...canvas.rgba.subarray(0, 8)], [0, 0, 0, 255, 9, 9, 9, 255], 'the black pixel is kept');
  });

  it('the general path (a partial window) agrees with the whole-tile path', () => {
    const mask = maskOf((x, y) => (x * 7 + y * 13) % 5 !== 0);
    const one = new TileCanvas();
    one.draw(positional(3), mask, whole, whole, 1);
    const pieces = new TileCanvas();
    const top = { x: 0, y: 0, width: 256, height: 128 };
    const bottom = { x: 0, y: 128, width: 256, height: 128 };
    pieces.draw(positional(3), mask, top, top, 1);
    pieces.draw(positional(3), mask, bottom, bottom, 1);
    assert.equal(pieces.filled, one.filled);
    assert.ok(pieces.rgba.equals(one.rgba));
  });
});
