import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { objectPath, signRangeGet } from '../../src/storage/s3-range-get.js';

describe('signed S3 range reads (SigV4)', () => {
  it("signs AWS's own GET Object example to its published signature", () => {
    // "Signature Calculations for the Authorization Header", example GET Object (AWS S3 API docs).
    const { headers } = signRangeGet(
      {
        host: 'examplebucket.s3.amazonaws.com',
        path: '/test.txt',
        range: 'bytes=0-9',
        region: 'us-east-1',
        now: new Date('2013-05-24T00:00:00Z'),
      },
      { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
    );
    assert.equal(
      headers.authorization,
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
        'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, ' +
        'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
    assert.equal(headers['x-amz-date'], '20130524T000000Z');
    assert.equal(headers['x-amz-content-sha256'], 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('a session token is sent and signed; a new day signs with a new key', () => {
    const keys = new Map<string, Buffer>();
    const sign = (now: string, sessionToken?: string) =>
      signRangeGet(
        { host: 'h', path: '/b/k', range: 'bytes=0-1', region: 'r', now: new Date(now) },
        { accessKeyId: 'A', secretAccessKey: 'S', sessionToken },
        keys,
      ).headers;
    const withToken = sign('2026-01-01T00:00:00Z', 'token');
    assert.equal(withToken['x-amz-security-token'], 'token');
    assert.match(
      withToken.authorization as string,
      /SignedHeaders=host;range;x-amz-content-sha256;x-amz-date;x-amz-security-token,/,
    );
    sign('2026-01-02T00:00:00Z');
    assert.equal(keys.size, 2, 'one signing key per day');
  });

  it('object paths are encoded once per segment, slashes kept', () => {
    assert.equal(objectPath('bench', 'tiles/surveys/a b/v1/Vert.tif'), '/bench/tiles/surveys/a%20b/v1/Vert.tif');
    assert.equal(objectPath('b', "x(1)*!'.tif"), '/b/x%281%29%2A%21%27.tif');
  });
});
