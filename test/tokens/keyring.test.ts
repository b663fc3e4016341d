import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  generateTokenSecret,
  parseTokenKeyring,
  rotateTokenKeyringConfig,
  TokenCodec,
} from '../../src/tokens/index.js';
import { throwsNadirError } from '../accounts/helpers.js';
import { testClock } from '../support/clock.js';

const secretA = randomBytes(32);
const secretB = randomBytes(32);

describe('token keyring config', () => {
  it('parses id:base64 entries, the first being current', () => {
    const keyring = parseTokenKeyring(` k1:${secretA.toString('base64')} , k0:${secretB.toString('base64url')} `);
    assert.equal(keyring.current, 'k1');
    assert.deepEqual(Object.keys(keyring.secrets), ['k1', 'k0']);
    assert.deepEqual(Buffer.from(keyring.secrets.k1 ?? []), secretA);
    assert.deepEqual(Buffer.from(keyring.secrets.k0 ?? []), secretB);
  });

  it('rejects bad configs with INVALID_CONFIG that never echoes a secret', () => {
    const short = randomBytes(16).toString('base64');
    const cases = [
      '',
      ' , ',
      `k1${secretA.toString('base64')}`,
      `:${secretA.toString('base64')}`,
      `k.1:${secretA.toString('base64')}`,
      `k1:${short}`,
      `k1:${randomBytes(33).toString('base64')}`,
      `k1:${secretA.toString('base64')}!`,
      `k1:${secretA.toString('base64')},k1:${secretB.toString('base64')}`,
    ];
    for (const config of cases) {
      const error = throwsNadirError(() => parseTokenKeyring(config), 'INVALID_CONFIG');
      assert.ok(!error.message.includes(secretA.toString('base64')), config);
      assert.ok(!error.message.includes(short), config);
    }
  });

  it('generates fresh secrets that parse and work', () => {
    const generated = generateTokenSecret('k7');
    assert.match(generated, /^k7:[A-Za-z0-9+/]{43}=$/);
    assert.notEqual(generateTokenSecret('k7'), generated);
    const keyring = parseTokenKeyring(generated);
    assert.equal(keyring.current, 'k7');
    assert.doesNotThrow(() => new TokenCodec(keyring, { now: testClock().now }));
  });

  it('rotates by prepending a new current secret and keeping the old ones', () => {
    const original = generateTokenSecret('k1');
    const rotated = rotateTokenKeyringConfig(original, 'k2');
    const keyring = parseTokenKeyring(rotated);
    assert.equal(keyring.current, 'k2');
    assert.ok(rotated.endsWith(`,${original}`));
    throwsNadirError(() => rotateTokenKeyringConfig(rotated, 'k1'), 'INVALID_CONFIG');
  });

  it('refuses a codec whose current secret is missing or malformed', () => {
    throwsNadirError(
      () => new TokenCodec({ current: 'k2', secrets: { k1: secretA } }, { now: testClock().now }),
      'INVALID_CONFIG',
    );
    throwsNadirError(
      () => new TokenCodec({ current: 'k1', secrets: { k1: randomBytes(16) } }, { now: testClock().now }),
      'INVALID_CONFIG',
    );
  });
});
