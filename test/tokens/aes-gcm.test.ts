/**
 * The token seal addon (native/token-seal) against node:crypto's AES-256-GCM: the same bytes out,
 * each other's output opened, and nothing of a forged input let through.
 */
import assert from 'node:assert/strict';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { nativeAesGcm } from '../../src/tokens/aes-gcm.js';

const aesGcm = nativeAesGcm();

function nodeSeal(key: Buffer, iv: Buffer, aad: Buffer, plaintext: Buffer): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(aad);
  return Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function nodeOpen(key: Buffer, aad: Buffer, sealed: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12), { authTagLength: 16 });
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]);
}

describe('AES-256-GCM of the token seal addon', () => {
  it("seals exactly as node:crypto does, and each opens the other's", () => {
    const out = Buffer.alloc(1024);
    const opened = Buffer.alloc(1024);
    for (const length of [0, 1, 15, 16, 17, 57, 120, 569, 1000 - 28]) {
      const key = randomBytes(32);
      const iv = randomBytes(12);
      const aad = randomBytes(length % 7);
      const plaintext = randomBytes(length);
      const expected = nodeSeal(key, iv, aad, plaintext);
      const written = aesGcm.seal(key, iv, aad, plaintext, out);
      assert.equal(written, 12 + length + 16);
      assert.deepEqual(out.subarray(0, written), expected, `${length} bytes`);
      assert.deepEqual(nodeOpen(key, aad, out.subarray(0, written)), plaintext);
      assert.equal(aesGcm.open(key, aad, expected, opened), length);
      assert.deepEqual(opened.subarray(0, length), plaintext);
    }
  });

  it('refuses a changed byte, another key, other additional data, and a cut tag, leaving nothing readable', () => {
    const key = randomBytes(32);
    const aad = Buffer.from('t1.k1');
    const plaintext = randomBytes(100);
    const sealed = nodeSeal(key, randomBytes(12), aad, plaintext);
    const out = Buffer.alloc(256);
    for (let index = 0; index < sealed.length; index++) {
      const changed = Buffer.from(sealed);
      changed[index] = (changed[index] as number) ^ 0x01;
      out.fill(0xaa);
      assert.equal(aesGcm.open(key, aad, changed, out), -1, `byte ${index} changed`);
      assert.equal(out.indexOf(plaintext.subarray(0, 16)), -1, 'no plaintext left behind');
    }
    assert.equal(aesGcm.open(randomBytes(32), aad, sealed, out), -1, 'another key');
    assert.equal(aesGcm.open(key, Buffer.from('t1.k0'), sealed, out), -1, 'other additional data');
    assert.equal(aesGcm.open(key, aad, sealed.subarray(0, sealed.length - 1), out), -1, 'tag cut short');
    assert.equal(aesGcm.open(key, aad, sealed.subarray(0, 27), out), -1, 'shorter than an iv and a tag');
  });

  it('throws for arguments of the wrong kind or size, never writing past a buffer', () => {
    const key = randomBytes(32);
    const iv = randomBytes(12);
    assert.throws(
      () => aesGcm.seal(key.subarray(0, 31), iv, Buffer.alloc(0), Buffer.alloc(1), Buffer.alloc(64)),
      RangeError,
    );
    assert.throws(
      () => aesGcm.seal(key, iv.subarray(0, 11), Buffer.alloc(0), Buffer.alloc(1), Buffer.alloc(64)),
      RangeError,
    );
    assert.throws(() => aesGcm.seal(key, iv, Buffer.alloc(0), Buffer.alloc(40), Buffer.alloc(67)), RangeError);
    assert.throws(() => aesGcm.seal('key' as never, iv, Buffer.alloc(0), Buffer.alloc(1), Buffer.alloc(64)), TypeError);
    const sealed = nodeSeal(key, iv, Buffer.alloc(0), Buffer.alloc(40));
    assert.throws(() => aesGcm.open(key, Buffer.alloc(0), sealed, Buffer.alloc(39)), RangeError);
    assert.throws(() => aesGcm.open(key, Buffer.alloc(0), new Uint16Array(40) as never, Buffer.alloc(64)), TypeError);
  });
});
