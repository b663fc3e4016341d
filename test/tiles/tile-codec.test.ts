import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { crc32, inflateSync } from 'node:zlib';
import { mulberry32 } from '@nadir/demo-town/random';
import sharp from 'sharp';
import type { Rotation } from '../../src/tiles/panorama.js';
import { encodeJpeg, encodePng, type PngCompression, type PngFilter } from '../../src/tiles/tile-codec.js';

const N = 256;
const ROTATIONS: Rotation[] = [0, 90, 180, 270];
const FILTERS: PngFilter[] = ['none', 'sub', 'up', 'paeth'];
const COMPRESSIONS: PngCompression[] = [1, 'runs'];
const HRO = join(import.meta.dirname, '../../../shared/realdata/rio-tiler/201404_13SED190110_201404_0x1500m_CL_1.tif');

/** A real aerial picture (USGS orthoimagery: street, roofs, cars) as 256 x 256 opaque RGBA; a noisy gradient without realdata. */
async function aerialTile(): Promise<Buffer> {
  if (existsSync(HRO)) {
    return sharp(HRO)
      .resize({ height: N })
      .extract({ left: 0, top: 0, width: N, height: N })
      .ensureAlpha()
      .raw()
      .toBuffer();
  }
  const random = mulberry32(3);
  const rgba = Buffer.alloc(N * N * 4);
  for (let i = 0; i < N * N; i++) {
    const x = i % N;
    const y = Math.floor(i / N);
    const noise = () => Math.floor(random() * 24);
    rgba.set([(x >> 1) + noise(), (y >> 1) + noise(), ((x + y) >> 2) + noise(), 255], i * 4);
  }
  return rgba;
}

/** `size` x `size` RGBA of random pixels; a quarter of them transparent black, some half transparent. */
function randomTile(seed: number, size = N): Buffer {
  const random = mulberry32(seed);
  const rgba = Buffer.alloc(size * size * 4);
  for (let i = 0; i < size * size; i++) {
    const r = random();
    if (r < 0.25) continue;
    const alpha = r < 0.3 ? Math.floor(random() * 255) : 255;
    rgba.set([random() * 256, random() * 256, random() * 256, alpha].map(Math.floor), i * 4);
  }
  return rgba;
}

/**
 * Runs for run_deflate to find: a transparent half, flat bands 300 pixels long (runs longer than
 * deflate's 258 and across rows), a checkerboard and noise; the last row ends inside a run.
 */
function patchyTile(): Buffer {
  const random = mulberry32(6);
  const rgba = Buffer.alloc(N * N * 4);
  for (let i = (N * N) / 2; i < N * N; i++) {
    const y = Math.floor(i / N);
    const x = i % N;
    const pixel =
      y % 16 < 5
        ? [200, 180, 40, 255]
        : y % 16 < 9
          ? ((x >> 3) + (y >> 3)) % 2
            ? [0, 0, 0, 255]
            : [255, 255, 255, 255]
          : [random() * 256, random() * 256, random() * 256, 255].map(Math.floor);
    rgba.set(pixel as number[], i * 4);
  }
  return rgba;
}

/** PNG's Paeth filter over `rgba`'s rows, written from the PNG specification (section 9.4). */
function paethRows(rgba: Buffer, size: number): Buffer {
  const stride = size * 4;
  const out = Buffer.alloc(size * (stride + 1));
  for (let y = 0; y < size; y++) {
    out[y * (stride + 1)] = 4;
    for (let i = 0; i < stride; i++) {
      const at = (dy: number, dx: number) =>
        y + dy < 0 || i + dx < 0 ? 0 : (rgba[(y + dy) * stride + i + dx] as number);
      const [a, b, c] = [at(0, -4), at(-1, 0), at(-1, -4)];
      const p = a + b - c;
      const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
      const predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      out[y * (stride + 1) + 1 + i] = ((rgba[y * stride + i] as number) - predicted) & 0xff;
    }
  }
  return out;
}

/** The picture turned clockwise, written as where each input pixel goes. */
function turned(rgba: Buffer, size: number, rotation: Rotation): Buffer {
  const out = Buffer.alloc(rgba.length);
  const last = size - 1;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const [tx, ty] =
        rotation === 90
          ? [last - y, x]
          : rotation === 180
            ? [last - x, last - y]
            : rotation === 270
              ? [y, last - x]
              : [x, y];
      rgba.copy(out, (ty * size + tx) * 4, (y * size + x) * 4, (y * size + x + 1) * 4);
    }
  }
  return out;
}

function withoutAlpha(rgba: Buffer): Buffer {
  const rgb = Buffer.alloc((rgba.length / 4) * 3);
  for (let i = 0; i < rgba.length / 4; i++) rgba.copy(rgb, i * 3, i * 4, i * 4 + 3);
  return rgb;
}

async function decode(image: Buffer): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

function meanAbsoluteDifference(a: Buffer, b: Buffer): number {
  assert.equal(a.length, b.length);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs((a[i] as number) - (b[i] as number));
  return sum / a.length;
}

/** The PNG's chunks, each CRC checked independently of the encoder (node:zlib's crc32). */
function chunksOf(png: Buffer): { type: string; data: Buffer }[] {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const chunks: { type: string; data: Buffer }[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    assert.equal(png.readUInt32BE(at + 8 + length), crc32(png.subarray(at + 4, at + 8 + length)), `${type} CRC`);
    chunks.push({ type, data: png.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  return chunks;
}

describe('encodeJpeg', () => {
  it('is a baseline 4:2:0 JPEG within JPEG tolerance of a real aerial picture, as sharp encoded it', async () => {
    const rgba = await aerialTile();
    const jpeg = await encodeJpeg(rgba, N, 85, 0);
    const meta = await sharp(jpeg).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height, meta.channels], ['jpeg', N, N, 3]);
    assert.equal(meta.chromaSubsampling, '4:2:0');
    assert.equal(meta.isProgressive, false);
    assert.ok(jpeg.includes(Buffer.from([0xff, 0xc0])), 'a baseline frame (SOF0)');

    const decoded = await decode(jpeg);
    const error = meanAbsoluteDifference(decoded.data, withoutAlpha(rgba));
    assert.ok(error < 6, `mean |difference| ${error.toFixed(2)} of 255`);
    // sharp at nadir's old settings: the same picture, and about as many bytes.
    const old = await sharp(rgba, { raw: { width: N, height: N, channels: 4 } })
      .removeAlpha()
      .jpeg({ quality: 85, optimiseCoding: false })
      .toBuffer();
    const fromOld = meanAbsoluteDifference(decoded.data, (await decode(old)).data);
    assert.ok(fromOld < 0.5, `mean |difference| from sharp's ${fromOld.toFixed(2)}`);
    assert.ok(Math.abs(jpeg.length / old.length - 1) < 0.03, `${jpeg.length} bytes, sharp's ${old.length}`);
  });

  it('ignores alpha: transparent black shows black', async () => {
    const rgba = await aerialTile();
    rgba.fill(0, 0, (N * N * 4) / 2);
    const { data } = await decode(await encodeJpeg(rgba, N, 85, 0));
    const top = data.subarray(0, (N * N * 3) / 2 - N * 3 * 8);
    assert.ok(
      top.every((v) => v < 8),
      'the transparent half is black',
    );
  });

  it('takes any size from 1 to 4096', async () => {
    for (const size of [1, 17, 4096]) {
      const meta = await sharp(await encodeJpeg(Buffer.alloc(size * size * 4, 200), size, 85, 90)).metadata();
      assert.deepEqual([meta.width, meta.height], [size, size]);
    }
  });
});

describe('encodePng', () => {
  it('decodes exactly to the input, RGB without alpha and RGBA with it, with every filter and compression', async () => {
    for (const rgba of [randomTile(1), await aerialTile(), patchyTile()]) {
      for (const compression of COMPRESSIONS) {
        for (const filter of FILTERS) {
          const what = `${filter} filter, compression ${compression}`;
          const rgb = await decode(await encodePng(rgba, N, false, compression, 0, filter));
          assert.deepEqual([rgb.width, rgb.height, rgb.channels], [N, N, 3]);
          assert.ok(rgb.data.equals(withoutAlpha(rgba)), `RGB, ${what}`);
          const withAlpha = await decode(await encodePng(rgba, N, true, compression, 0, filter));
          assert.equal(withAlpha.channels, 4);
          assert.ok(withAlpha.data.equals(rgba), `RGBA, ${what} (transparent pixels keep alpha 0)`);
        }
      }
    }
  });

  it("runs: inflates with zlib to the filtered rows, Paeth's as the PNG spec defines it", async () => {
    const rgba = patchyTile();
    const idat = chunksOf(await encodePng(rgba, N, true, 'runs', 0, 'paeth'))[1]?.data as Buffer;
    assert.deepEqual([idat[0], idat[1]! >> 6], [0x78, 0], 'zlib header: deflate, fastest compression');
    assert.ok(inflateSync(idat).equals(paethRows(rgba, N)));
  });

  it('runs: an empty tile is under 1.5 KB, an aerial one much less than raw and near zlib level 1', async () => {
    const empty = await encodePng(Buffer.alloc(N * N * 4), N, true, 'runs', 0, 'paeth');
    assert.ok(empty.length < 1500, `${empty.length} bytes for 256 KiB of transparent black`);
    const aerial = await aerialTile();
    const runs = await encodePng(aerial, N, false, 'runs', 0, 'paeth');
    const zlib = await encodePng(aerial, N, false, 1, 0, 'paeth');
    assert.ok(runs.length < N * N * 3 * 0.8, `${runs.length} bytes for ${N * N * 3} of RGB`);
    assert.ok(runs.length < zlib.length * 1.2, `${runs.length} bytes, zlib level 1 ${zlib.length}`);
  });

  it("runs: keeps codes within deflate's 15 bits when byte counts are as skewed as Fibonacci numbers", async () => {
    // 26 byte values seen 1, 1, 2, 3, 5, ... 121393 times: a plain Huffman code would be 25 bits deep.
    const counts = [1, 1];
    while (counts.length < 26) counts.push((counts.at(-1) as number) + (counts.at(-2) as number));
    const bytes: number[] = counts.flatMap((count, value) => Array<number>(count).fill(value * 9));
    while (bytes.length < N * N * 3) bytes.push(7);
    const random = mulberry32(5);
    for (let i = bytes.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [bytes[i], bytes[j]] = [bytes[j] as number, bytes[i] as number];
    }
    const rgba = Buffer.alloc(N * N * 4, 255);
    for (let i = 0; i < N * N; i++) for (let c = 0; c < 3; c++) rgba[i * 4 + c] = bytes[i * 3 + c] as number;
    const rgb = await decode(await encodePng(rgba, N, false, 'runs', 0, 'none'));
    assert.ok(rgb.data.equals(withoutAlpha(rgba)));
  });

  it('writes a well-formed PNG: IHDR, one zlib IDAT at the level asked, IEND, valid CRCs', async () => {
    const rgba = randomTile(2);
    for (const [withAlpha, colourType] of [
      [false, 2],
      [true, 6],
    ] as const) {
      const chunks = chunksOf(await encodePng(rgba, N, withAlpha, 1, 0));
      assert.deepEqual(
        chunks.map((c) => c.type),
        ['IHDR', 'IDAT', 'IEND'],
      );
      const ihdr = (chunks[0] as { data: Buffer }).data;
      assert.deepEqual(
        [ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ...ihdr.subarray(8)],
        [N, N, 8, colourType, 0, 0, 0],
      );
      const idat = (chunks[1] as { data: Buffer }).data;
      assert.equal(idat[1]! >> 6, 0, 'zlib header: fastest compression');
      const scanlines = inflateSync(idat);
      const stride = N * (withAlpha ? 4 : 3) + 1;
      assert.equal(scanlines.length, N * stride);
      for (let y = 0; y < N; y++) assert.equal(scanlines[y * stride], 2, 'the up filter on every row');
    }
    const stored = chunksOf(await encodePng(rgba, N, true, 0, 0))[1]?.data as Buffer;
    assert.ok(inflateSync(stored).length === N * (N * 4 + 1) && stored.length > N * N * 4, 'level 0 stores');
  });

  it('takes odd and tiny sizes', async () => {
    for (const size of [1, 2, 5, 17]) {
      for (const rgba of [randomTile(size, size), Buffer.alloc(size * size * 4, 9)]) {
        for (const compression of COMPRESSIONS) {
          for (const rotation of ROTATIONS) {
            const { data, width } = await decode(await encodePng(rgba, size, true, compression, rotation, 'paeth'));
            assert.equal(width, size);
            assert.ok(data.equals(turned(rgba, size, rotation)), `size ${size}, ${compression}, rotation ${rotation}`);
          }
        }
      }
    }
  });
});

describe('rotation', () => {
  /** Red block near the top-left corner, green near the top-right, blue elsewhere. */
  function marked(): Buffer {
    const rgba = Buffer.alloc(N * N * 4);
    for (let y = 0; y < N; y++) {
      for (let x = 0; x < N; x++) {
        const top = y >= 16 && y < 48;
        const colour = top && x >= 16 && x < 48 ? [255, 0, 0] : top && x >= 208 && x < 240 ? [0, 255, 0] : [0, 0, 255];
        rgba.set([...colour, 255], (y * N + x) * 4);
      }
    }
    return rgba;
  }

  /** Centre of the pixels of one pure colour (channel 0 red, 1 green). */
  function centreOf(rgb: Buffer, channel: number): [number, number] {
    let sx = 0;
    let sy = 0;
    let n = 0;
    for (let i = 0; i < N * N; i++) {
      const [r, g, b] = [rgb[i * 3] as number, rgb[i * 3 + 1] as number, rgb[i * 3 + 2] as number];
      if ((channel === 0 ? r : g) > 200 && (channel === 0 ? g : r) < 60 && b < 60) {
        sx += i % N;
        sy += Math.floor(i / N);
        n++;
      }
    }
    assert.ok(n > 500, 'the mark survives');
    return [Math.round(sx / n), Math.round(sy / n)];
  }

  // Clockwise: the top-left corner goes top-right at 90, bottom-right at 180, bottom-left at 270;
  // the top-right corner follows a quarter turn behind. Swapping 90 and 270 (or mirroring) moves them elsewhere.
  const expected: Record<Rotation, [[number, number], [number, number]]> = {
    0: [
      [32, 32],
      [224, 32],
    ],
    90: [
      [224, 32],
      [224, 224],
    ],
    180: [
      [224, 224],
      [32, 224],
    ],
    270: [
      [32, 224],
      [32, 32],
    ],
  };

  for (const rotation of ROTATIONS) {
    it(`turns ${rotation} degrees clockwise, JPEG and PNG`, async () => {
      for (const encode of [
        () => encodeJpeg(marked(), N, 85, rotation),
        () => encodePng(marked(), N, false, 1, rotation),
      ]) {
        const { data } = await decode(await encode());
        assert.deepEqual([centreOf(data, 0), centreOf(data, 1)], expected[rotation]);
      }
    });
  }

  it('moves every pixel where a clockwise turn puts it (PNG, exactly)', async () => {
    const rgba = randomTile(4);
    for (const rotation of ROTATIONS) {
      const { data } = await decode(await encodePng(rgba, N, true, 1, rotation));
      assert.ok(data.equals(turned(rgba, N, rotation)), `rotation ${rotation}`);
    }
  });
});

describe('into', () => {
  it('writes the bytes into the buffer given when they fit, and answers a view of it', async () => {
    const rgba = randomTile(9);
    for (const encode of [
      (into?: Buffer) => encodePng(rgba, N, true, 'runs', 0, 'paeth', into),
      (into?: Buffer) => encodeJpeg(rgba, N, 85, 0, into),
    ]) {
      const alone = await encode();
      const into = Buffer.alloc(512 * 1024, 0xee);
      const written = await encode(into);
      assert.ok(written.equals(alone), 'the same bytes');
      assert.equal(written.buffer, into.buffer, 'a view of the buffer given');
      assert.equal(written.byteOffset, into.byteOffset);
      assert.equal(into[written.length], 0xee, 'nothing written past the bytes');
      const small = Buffer.alloc(100, 0xee);
      const apart = await encode(small);
      assert.ok(apart.equals(alone) && apart.buffer !== small.buffer, 'too small: a Buffer of its own');
      assert.ok(
        small.every((byte) => byte === 0xee),
        'too small: left as it was',
      );
    }
  });
});

describe('bad arguments', () => {
  const rgba = Buffer.alloc(N * N * 4);
  const cases: [string, () => unknown, typeof TypeError | typeof RangeError][] = [
    ['a short buffer', () => encodeJpeg(rgba.subarray(4), N, 85, 0), RangeError],
    ['a long buffer', () => encodePng(Buffer.alloc(N * N * 4 + 1), N, false, 1, 0), RangeError],
    ['a Float32Array', () => encodeJpeg(new Float32Array(N * N) as never, N, 85, 0), TypeError],
    ['an array', () => encodePng([1, 2, 3, 4] as never, 1, false, 1, 0), TypeError],
    ['no buffer', () => encodeJpeg(undefined as never, N, 85, 0), TypeError],
    ['size 0', () => encodeJpeg(Buffer.alloc(0), 0, 85, 0), RangeError],
    ['size 4097', () => encodePng(Buffer.alloc(4), 4097, false, 1, 0), RangeError],
    ['size 1.5', () => encodeJpeg(rgba, 1.5, 85, 0), RangeError],
    ['size NaN', () => encodeJpeg(rgba, Number.NaN, 85, 0), RangeError],
    ['size as a string', () => encodeJpeg(rgba, '256' as never, 85, 0), TypeError],
    ['quality 0', () => encodeJpeg(rgba, N, 0, 0), RangeError],
    ['quality 101', () => encodeJpeg(rgba, N, 101, 0), RangeError],
    ['rotation 45', () => encodeJpeg(rgba, N, 85, 45 as never), RangeError],
    ['rotation -90', () => encodePng(rgba, N, false, 1, -90 as never), RangeError],
    ['rotation 360', () => encodePng(rgba, N, false, 1, 360 as never), RangeError],
    ['level -1', () => encodePng(rgba, N, false, -1, 0), RangeError],
    ['compression "fast"', () => encodePng(rgba, N, false, 'fast' as never, 0), TypeError],
    ['into as an array', () => encodeJpeg(rgba, N, 85, 0, [0] as never), TypeError],
    ['an unknown filter', () => encodePng(rgba, N, false, 1, 0, 'average' as never), RangeError],
    ['level 13', () => encodePng(rgba, N, false, 13, 0), RangeError],
    ['withAlpha as a string', () => encodePng(rgba, N, 'yes' as never, 1, 0), TypeError],
  ];
  for (const [what, call, type] of cases) {
    it(`throws a ${type.name} at once for ${what}`, () => assert.throws(call, type));
  }
});

describe('concurrency', () => {
  it('64 encodes at once each resolve to their own picture', async () => {
    const tiles = Array.from({ length: 64 }, (_, i) => randomTile(100 + i));
    const encoded = await Promise.all(
      tiles.map((rgba, i) =>
        i % 2 ? encodePng(rgba, N, true, 1, ROTATIONS[i % 4] as Rotation) : encodeJpeg(rgba, N, 85, 0),
      ),
    );
    for (const [i, body] of encoded.entries()) {
      const { data } = await decode(body);
      const rgba = tiles[i] as Buffer;
      if (i % 2) assert.ok(data.equals(turned(rgba, N, ROTATIONS[i % 4] as Rotation)), `tile ${i}`);
      else {
        // Random pixels are JPEG's worst case (about 37 here); another tile's are about 85 apart.
        const error = meanAbsoluteDifference(data, withoutAlpha(rgba));
        assert.ok(error < 50, `tile ${i}: mean |difference| ${error.toFixed(1)}`);
      }
    }
  });
});
