import assert from 'node:assert/strict';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { TokenCodec, type TokenKeyring } from '../../src/tokens/index.js';
import { assertNadirError, throwsNadirError } from '../accounts/helpers.js';

const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const ISSUED_AT = new Date('2025-05-01T12:00:00.000Z');
const secretK0 = randomBytes(32);
const secretK1 = randomBytes(32);

const SUBJECT = {
  accountId: '6f1c2d4e-8a9b-4c0d-9e1f-2a3b4c5d6e7f',
  keyId: '3f9c0a1b2c4d',
  aoi: { lon: -122.4194155, lat: 37.7749295, radius: 75 },
};

function codecWith(keyring: TokenKeyring): TokenCodec {
  return new TokenCodec(keyring, { now: () => ISSUED_AT });
}

const codec = codecWith({ current: 'k1', secrets: { k1: secretK1, k0: secretK0 } });

function assertInvalid(token: unknown, label: string): void {
  let thrown: unknown;
  try {
    codec.decode(token);
  } catch (error) {
    thrown = error;
  }
  assert.ok(thrown !== undefined, `accepted: ${label}`);
  assertNadirError(thrown, 'TRANSACTION_TOKEN_INVALID');
}

function replaceAt(text: string, index: number, character: string): string {
  return text.slice(0, index) + character + text.slice(index + 1);
}

/**
 * The base64 and base64url text that encoding `value` produces wherever it sits in a longer
 * buffer: for each of the 3 byte alignments, the characters whose 6 bits all come from `value`.
 */
function base64Cores(value: Buffer): string[] {
  const cores: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const first = Math.ceil((8 * shift) / 6);
    const end = Math.floor((8 * (shift + value.length)) / 6);
    const shifted = Buffer.concat([Buffer.alloc(shift), value]);
    for (const encoding of ['base64', 'base64url'] as const) {
      cores.push(shifted.toString(encoding).slice(first, end));
    }
  }
  return cores;
}

describe('TokenCodec', () => {
  it('round-trips the claims', () => {
    const { token, claims } = codec.issue(SUBJECT);
    assert.match(token, /^t1\.k1\.[A-Za-z0-9_-]+$/);
    assert.ok(token.length < 200, `token is ${token.length} characters`);
    assert.match(claims.tokenId, /^[0-9a-f]{32}$/);
    assert.deepEqual(codec.decode(token), {
      tokenId: claims.tokenId,
      ...SUBJECT,
      issuedAt: ISSUED_AT,
      expiresAt: new Date(ISSUED_AT.getTime() + 30 * 24 * 3600 * 1000),
    });
  });

  it('is AES-256-GCM as node:crypto has it: its tokens open there, and tokens sealed there decode', () => {
    const { token, claims } = codec.issue(SUBJECT);
    const sealed = Buffer.from(token.split('.')[2] ?? '', 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', secretK1, sealed.subarray(0, 12), { authTagLength: 16 });
    decipher.setAAD(Buffer.from('t1.k1'));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    const plaintext = Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]);
    // The claims' layout (claims.ts): version 1, then the token id's 16 bytes.
    assert.equal(plaintext[0], 1);
    assert.equal(plaintext.subarray(1, 17).toString('hex'), claims.tokenId);

    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', secretK1, iv, { authTagLength: 16 });
    cipher.setAAD(Buffer.from('t1.k1'));
    const resealed = Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    assert.deepEqual(codec.decode(`t1.k1.${resealed.toString('base64url')}`), claims);
  });

  it('gives each decoded token claims of its own (its plaintext buffer is used again)', () => {
    const first = codec.issue(SUBJECT);
    const second = codec.issue({ accountId: 'other-account', keyId: 'other-key', aoi: { lon: 1, lat: 2, radius: 3 } });
    const decoded = codec.decode(first.token);
    codec.decode(second.token);
    codec.issue(SUBJECT);
    assert.deepEqual(decoded, first.claims);
  });

  it('round-trips ids of the longest length, and refuses to issue longer ones', () => {
    // 255 bytes of UTF-8 each: the most the plaintext holds.
    const longest = { ...SUBJECT, accountId: `${'\u00e9'.repeat(127)}a`, keyId: 'k'.repeat(255) };
    const { token, claims } = codec.issue(longest);
    assert.deepEqual(codec.decode(token), claims);
    assert.equal(claims.accountId, longest.accountId);
    throwsNadirError(() => codec.issue({ ...SUBJECT, keyId: 'k'.repeat(256) }), 'INTERNAL');
    throwsNadirError(() => codec.issue({ ...SUBJECT, accountId: '\u00e9'.repeat(128) }), 'INTERNAL');
  });

  it('makes every token unique, even for the same request', () => {
    const first = codec.issue(SUBJECT);
    const second = codec.issue(SUBJECT);
    assert.notEqual(first.token, second.token);
    assert.notEqual(first.claims.tokenId, second.claims.tokenId);
  });

  it('never repeats a token id or an IV, across many refills of its random pool', () => {
    // 28 random bytes per token from a 4 KiB pool: 1,000 tokens refill it several times.
    const ids = new Set<string>();
    const ivs = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const { token, claims } = codec.issue(SUBJECT);
      ids.add(claims.tokenId);
      ivs.add(
        Buffer.from(token.split('.')[2] ?? '', 'base64url')
          .subarray(0, 12)
          .toString('hex'),
      );
      assert.equal(codec.decode(token).tokenId, claims.tokenId);
    }
    assert.equal(ids.size, 1000);
    assert.equal(ivs.size, 1000);
  });

  it('rejects every single-character change of the token', () => {
    const { token } = codec.issue(SUBJECT);
    for (let index = 0; index < token.length; index++) {
      const original = token[index] ?? '';
      const alphabetIndex = BASE64URL_ALPHABET.indexOf(original);
      // The next character in the alphabet, and for separators something else entirely.
      const replacement = alphabetIndex === -1 ? 'x' : (BASE64URL_ALPHABET[(alphabetIndex + 1) % 64] ?? 'A');
      assertInvalid(replaceAt(token, index, replacement), `character ${index} changed`);
    }
  });

  it('rejects every single-bit and single-byte change of the sealed bytes', () => {
    const { token } = codec.issue(SUBJECT);
    const header = token.slice(0, token.lastIndexOf('.') + 1);
    const sealed = Buffer.from(token.slice(header.length), 'base64url');
    for (let index = 0; index < sealed.length; index++) {
      for (const mask of [0x01, 0x80, 0xff]) {
        const altered = Buffer.from(sealed);
        altered[index] = (altered[index] ?? 0) ^ mask;
        assertInvalid(header + altered.toString('base64url'), `byte ${index} ^ ${mask}`);
      }
    }
  });

  it('rejects truncated and extended tokens', () => {
    const { token } = codec.issue(SUBJECT);
    for (let length = 0; length < token.length; length++) {
      assertInvalid(token.slice(0, length), `truncated to ${length}`);
    }
    for (const suffix of ['A', 'AA', 'AAAA', '=', '==', '.', '.x', ' ', '\n', '%00']) {
      assertInvalid(token + suffix, `extended by ${JSON.stringify(suffix)}`);
    }
    const sealed = Buffer.from(token.split('.')[2] ?? '', 'base64url');
    const longer = Buffer.concat([sealed, Buffer.from([0])]).toString('base64url');
    assertInvalid(`t1.k1.${longer}`, 'one byte appended to the sealed bytes');
  });

  it('rejects a sealed body longer than any claims as altered, within the length a token may have', () => {
    const body = randomBytes(740).toString('base64url');
    assert.ok(`t1.k1.${body}`.length <= 1024);
    const error = throwsNadirError(() => codec.decode(`t1.k1.${body}`), 'TRANSACTION_TOKEN_INVALID');
    assert.equal(error.details.reason, 'tampered');
  });

  it('rejects empty input, garbage, non-strings and other prefixes', () => {
    const { token } = codec.issue(SUBJECT);
    const body = token.split('.')[2] ?? '';
    const garbage: unknown[] = [
      '',
      ' ',
      '.',
      '..',
      't1',
      't1.',
      't1.k1',
      't1.k1.',
      't1..',
      `t1..${body}`,
      't1.k1.!!!!',
      't1.k1.AAAA',
      `t1.k1.${'A'.repeat(200)}`,
      'x'.repeat(100_000),
      `T1.k1.${body}`,
      `t2.k1.${body}`,
      `t0.k1.${body}`,
      `v1.k1.${body}`,
      `.k1.${body}`,
      `t1.k1.${body}.`,
      `t1.k1.k1.${body}`,
      `t1.k1.${body.replaceAll('-', '+').replaceAll('_', '/')}+/`,
      `t1.__proto__.${body}`,
      `t1.constructor.${body}`,
      `t1.toString.${body}`,
      'é',
      '\u0000',
      '🙂🙂🙂',
      randomBytes(64).toString('base64url'),
      undefined,
      null,
      0,
      42,
      {},
      [],
      [token],
      Buffer.from(token),
    ];
    for (const input of garbage) {
      assertInvalid(input, typeof input === 'string' ? JSON.stringify(input.slice(0, 40)) : String(input));
    }
  });

  it('rejects an unknown secret id, and a body moved under another listed secret id', () => {
    const { token } = codec.issue(SUBJECT);
    const body = token.split('.')[2] ?? '';
    assertInvalid(`t1.k9.${body}`, 'unknown secret id');
    // k0 is listed, but the body was sealed with k1 and authenticated with header t1.k1.
    assertInvalid(`t1.k0.${body}`, 'body under another secret id');
  });

  it('accepts tokens from a still-listed old secret and rejects rotated-out ones', () => {
    const oldCodec = codecWith({ current: 'k0', secrets: { k0: secretK0 } });
    const oldToken = oldCodec.issue(SUBJECT).token;
    assert.ok(oldToken.startsWith('t1.k0.'));
    assert.equal(codec.decode(oldToken).accountId, SUBJECT.accountId, 'k0 is still listed');

    const rotatedOut = codecWith({ current: 'k1', secrets: { k1: secretK1 } });
    const error = throwsNadirError(() => rotatedOut.decode(oldToken), 'TRANSACTION_TOKEN_INVALID');
    assert.equal(error.details.reason, 'unknown_secret');

    // Same secret id but a different secret (e.g. another deployment): authentication fails.
    const impostor = codecWith({ current: 'k0', secrets: { k0: randomBytes(32) } });
    throwsNadirError(() => impostor.decode(oldToken), 'TRANSACTION_TOKEN_INVALID');
  });

  it('does not reveal the account, key or point in the token', () => {
    const apiKey = `nadir_${SUBJECT.keyId}_${randomBytes(32).toString('base64url')}`;
    const { token } = codec.issue(SUBJECT);
    const decodedBody = Buffer.from(token.split('.')[2] ?? '', 'base64url');
    const secrets = [
      apiKey,
      SUBJECT.accountId,
      SUBJECT.accountId.replaceAll('-', ''),
      SUBJECT.keyId,
      String(SUBJECT.aoi.lon),
      String(SUBJECT.aoi.lat),
      `${SUBJECT.aoi.lon},${SUBJECT.aoi.lat}`,
    ];
    for (const secret of secrets) {
      assert.ok(!token.includes(secret), `token contains ${secret} in plain text`);
      for (const core of base64Cores(Buffer.from(secret))) {
        assert.ok(!token.includes(core), `token contains ${secret} in base64 (${core})`);
      }
      assert.equal(decodedBody.indexOf(secret), -1, `sealed bytes contain ${secret}`);
    }
    const pointBytes = Buffer.alloc(16);
    pointBytes.writeDoubleBE(SUBJECT.aoi.lon, 0);
    pointBytes.writeDoubleBE(SUBJECT.aoi.lat, 8);
    assert.equal(decodedBody.indexOf(pointBytes.subarray(0, 8)), -1, 'lon as float64 in the clear');
    assert.equal(decodedBody.indexOf(Buffer.from(SUBJECT.accountId)), -1);
  });
});
