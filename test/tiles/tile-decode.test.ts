/**
 * The addon's JPEG decoder (native/tile-codec/src/decode.c) and the stacks whose layers come as
 * JPEG bytes: pixels against sharp's decode of the same bytes (the decoder nadir used before), masks
 * applied, scaled decodes, and broken bytes that must reject rather than crash or paint grey.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deflateSync } from 'node:zlib';
import { mulberry32 } from '@nadir/demo-town/random';
import sharp from 'sharp';
import { decodeJpeg, encodePng, inflateZlib, type PictureLayer } from '../../src/tiles/tile-codec.js';

const N = 256;

/** An aerial-like picture: smooth gradients, edges and noise, opaque RGBA. */
function picture(seed: number): Buffer {
  const random = mulberry32(seed);
  const rgba = Buffer.alloc(N * N * 4);
  for (let i = 0; i < N * N; i++) {
    const x = i % N;
    const y = Math.floor(i / N);
    const roof = (x >> 5) % 2 === (y >> 5) % 2 ? 60 : 0;
    const noise = () => Math.floor(random() * 20);
    rgba.set([(x >> 1) + roof + noise(), (y >> 1) + noise(), ((x + y) >> 2) + roof + noise(), 255], i * 4);
  }
  return rgba;
}

async function jpegOf(rgba: Buffer, options: { grey?: boolean; quality?: number } = {}): Promise<Buffer> {
  let image = sharp(rgba, { raw: { width: N, height: N, channels: 4 } }).removeAlpha();
  if (options.grey) image = image.greyscale();
  return image.jpeg({ quality: options.quality ?? 90, chromaSubsampling: '4:2:0' }).toBuffer();
}

async function sharpDecode(jpeg: Buffer): Promise<Buffer> {
  return sharp(jpeg).ensureAlpha().raw().toBuffer();
}

function differences(a: Uint8Array, b: Uint8Array): { mean: number; max: number } {
  assert.equal(a.length, b.length);
  let sum = 0;
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs((a[i] as number) - (b[i] as number));
    sum += d;
    if (d > max) max = d;
  }
  return { mean: sum / a.length, max };
}

/** A mask with diagonal stripes and a hole: whole bytes set, whole bytes clear and mixed bytes. */
function stripedMask(size = N): Uint8Array {
  const mask = new Uint8Array((size * size) / 8);
  for (let i = 0; i < size * size; i++) {
    const x = i % size;
    const y = Math.floor(i / size);
    const valid = (x + y) % 40 >= 9 && (x - 100) ** 2 + (y - 120) ** 2 > 900;
    if (valid) mask[i >> 3] = (mask[i >> 3] as number) | (0x80 >> (i & 7));
  }
  return mask;
}

const bit = (mask: Uint8Array, i: number) => ((mask[i >> 3] as number) >> (7 - (i & 7))) & 1;

describe('decodeJpeg', () => {
  it('gives the pixels sharp decodes from the same bytes, alpha 255', async () => {
    const jpeg = await jpegOf(picture(1));
    const pixels = await decodeJpeg(jpeg, 1, N);
    assert.equal(pixels.length, N * N * 4);
    const { mean, max } = differences(pixels, await sharpDecode(jpeg));
    assert.ok(mean < 0.5 && max <= 4, `mean ${mean}, max ${max} from sharp's decode`);
    for (let i = 3; i < pixels.length; i += 4) assert.equal(pixels[i], 255);
    // And close to the picture itself: a decode of something else would be far off.
    const fromOriginal = differences(pixels, picture(1)).mean;
    assert.ok(fromOriginal < 8, `mean ${fromOriginal} from the encoded picture`);
    // The same picture upside down: the same colours, elsewhere.
    const flipped = Buffer.alloc(N * N * 4);
    for (let y = 0; y < N; y++) picture(1).copy(flipped, (N - 1 - y) * N * 4, y * N * 4, (y + 1) * N * 4);
    const fromOther = differences(pixels, flipped).mean;
    assert.ok(fromOther > 2 * fromOriginal, `mean ${fromOther} from another picture, ${fromOriginal} from its own`);
  });

  it('turns a grey JPEG into equal R, G and B', async () => {
    const jpeg = await jpegOf(picture(3), { grey: true });
    const pixels = await decodeJpeg(jpeg, 1, N);
    for (let i = 0; i < pixels.length; i += 4) {
      assert.equal(pixels[i], pixels[i + 1]);
      assert.equal(pixels[i], pixels[i + 2]);
      assert.equal(pixels[i + 3], 255);
    }
    assert.ok(differences(pixels, await sharpDecode(jpeg)).max <= 4);
  });

  it('paints only the pixels a mask marks, leaving the rest of `into` as it was', async () => {
    const jpeg = await jpegOf(picture(4));
    const whole = await decodeJpeg(jpeg, 1, N);
    const mask = stripedMask();
    const into = Buffer.alloc(N * N * 4, 7);
    assert.equal(await decodeJpeg(jpeg, 1, N, mask, into), undefined);
    let painted = 0;
    for (let i = 0; i < N * N; i++) {
      const expected = bit(mask, i) ? whole.subarray(i * 4, i * 4 + 4) : Buffer.from([7, 7, 7, 7]);
      assert.deepEqual(into.subarray(i * 4, i * 4 + 4), expected, `pixel ${i}`);
      painted += bit(mask, i);
    }
    assert.ok(painted > N * N * 0.5 && painted < N * N * 0.9, `${painted} pixels painted`);
  });

  it('decodes at 1/2, 1/4 and 1/8 size, close to the full decode shrunk', async () => {
    const jpeg = await jpegOf(picture(5));
    for (const scale of [2, 4, 8] as const) {
      const size = N / scale;
      const pixels = await decodeJpeg(jpeg, scale, size);
      assert.equal(pixels.length, size * size * 4);
      const shrunk = await sharp(await decodeJpeg(jpeg, 1, N), { raw: { width: N, height: N, channels: 4 } })
        .resize(size, size, { kernel: 'cubic' })
        .raw()
        .toBuffer();
      const { mean } = differences(pixels, shrunk);
      assert.ok(mean < 6, `1/${scale}: mean ${mean} from the shrunk full decode`);
    }
    await assert.rejects(decodeJpeg(jpeg, 2, N), /not the size of a tile/);
    await assert.rejects(decodeJpeg(jpeg, 1, 128), /not the size of a tile/);
  });

  it('rejects broken bytes with an error, and the process lives on', async () => {
    const jpeg = await jpegOf(picture(6));
    const random = mulberry32(9);
    const noise = Buffer.from(Array.from({ length: 5000 }, () => Math.floor(random() * 256)));
    const corrupt = Buffer.from(jpeg);
    for (let i = Math.floor(jpeg.length / 2); i < jpeg.length - 2; i += 7) corrupt[i] = 0xff;
    const png = await sharp(picture(6), { raw: { width: N, height: N, channels: 4 } })
      .png()
      .toBuffer();
    for (const [name, bytes] of [
      ['empty', Buffer.alloc(0)],
      ['noise', noise],
      ['truncated', jpeg.subarray(0, Math.floor(jpeg.length / 2))],
      ['headers only', jpeg.subarray(0, 600)],
      ['corrupt entropy data', corrupt],
      ['a PNG', png],
    ] as const) {
      await assert.rejects(decodeJpeg(bytes, 1, N), Error, name);
    }
    // Still decoding afterwards.
    assert.equal((await decodeJpeg(jpeg, 1, N)).length, N * N * 4);
  });

  it('refuses bad arguments at once', () => {
    const bytes = Buffer.alloc(10);
    assert.throws(() => decodeJpeg(bytes, 3 as 1, N), RangeError);
    assert.throws(() => decodeJpeg('x' as unknown as Uint8Array, 1, N), TypeError);
    assert.throws(() => decodeJpeg(bytes, 1, N, new Uint8Array(10), Buffer.alloc(N * N * 4)), RangeError);
    assert.throws(() => decodeJpeg(bytes, 1, N, undefined, Buffer.alloc(10)), RangeError);
    assert.throws(() => decodeJpeg(bytes, 1, N, stripedMask(), undefined as unknown as Uint8Array), TypeError);
  });
});

describe('stacks of JPEG layers', () => {
  it('composite exactly as the same layers decoded first, and fill the buffers they were given', async () => {
    const top = await jpegOf(picture(7));
    const bottom = await jpegOf(picture(8), { quality: 70 });
    const mask = stripedMask();
    const [topPixels, bottomPixels] = [await decodeJpeg(top, 1, N), await decodeJpeg(bottom, 1, N)];
    const decoded: PictureLayer[] = [{ pixels: topPixels, mask }, { pixels: bottomPixels }];
    const reference = await encodePng(decoded, N, true, 'runs', 0, 'paeth');
    const keep = Buffer.alloc(N * N * 4);
    const cases: PictureLayer[][] = [
      [{ jpeg: top, mask }, { jpeg: bottom }],
      [{ jpeg: top, mask, pixels: keep }, { pixels: bottomPixels }],
      [{ pixels: topPixels, mask }, { jpeg: bottom }],
    ];
    for (const layers of cases) assert.deepEqual(await encodePng(layers, N, true, 'runs', 0, 'paeth'), reference);
    assert.deepEqual(keep, topPixels);
  });

  it('leave pixels no layer covers transparent, and reject a broken layer', async () => {
    const top = await jpegOf(picture(9));
    const mask = stripedMask();
    const png = await encodePng([{ jpeg: top, mask }], N, true, 'runs', 0, 'none');
    const rgba = await sharp(png).ensureAlpha().raw().toBuffer();
    const whole = await decodeJpeg(top, 1, N);
    for (let i = 0; i < N * N; i += 97) {
      const expected = bit(mask, i) ? whole.subarray(i * 4, i * 4 + 4) : Buffer.alloc(4);
      assert.deepEqual(rgba.subarray(i * 4, i * 4 + 4), expected, `pixel ${i}`);
    }
    const truncated = top.subarray(0, top.length >> 1);
    await assert.rejects(encodePng([{ jpeg: truncated, mask }, { jpeg: top }], N, true, 'runs', 0), /corrupt JPEG/);
  });
});

describe('inflateZlib', () => {
  it('inflates a mask tile to exactly its length, and refuses anything else', () => {
    const mask = Buffer.from(stripedMask());
    const stream = deflateSync(mask);
    assert.deepEqual(inflateZlib(stream, mask.length), mask);
    assert.throws(() => inflateZlib(stream, mask.length - 1), /expected length/);
    assert.throws(() => inflateZlib(stream, mask.length + 1), /expected length/);
    const corrupt = Buffer.from(stream);
    corrupt[corrupt.length >> 1] = (corrupt[corrupt.length >> 1] as number) ^ 0x55;
    assert.throws(() => inflateZlib(corrupt, mask.length), Error);
    assert.throws(() => inflateZlib(Buffer.alloc(0), mask.length), Error);
    assert.throws(() => inflateZlib(stream, 0), RangeError);
    assert.throws(() => inflateZlib('x' as unknown as Uint8Array, 8), TypeError);
  });
});
