import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { describe, it } from 'node:test';
import { objectPath, S3RangeGet, signRangeGet } from '../../src/storage/s3-range-get.js';

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

  it('hands each part of a range on as soon as its last byte has come', async () => {
    const PART = 64 * 1024;
    const body = randomBytes(2 * PART + 100);
    let sendRest = () => {};
    const server = createServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', () => {
        socket.write(`HTTP/1.1 206 Partial Content\r\nContent-Length: ${body.length}\r\n\r\n`);
        socket.write(body.subarray(0, PART + 10));
        sendRest = () => socket.write(body.subarray(PART + 10));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const get = new S3RangeGet({
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      region: 'r',
      credentials: async () => ({ accessKeyId: 'A', secretAccessKey: 'S' }),
      timeoutMs: 5_000,
      maxConnections: 1,
      now: () => new Date('2026-01-01T00:00:00Z'),
    });
    try {
      const arrived: number[] = [];
      let firstCame = () => {};
      const first = new Promise<void>((resolve) => {
        firstCame = resolve;
      });
      const parts = get.getParts('b', 'k', 0, body.length, PART, (index, part) => {
        assert.ok(part.equals(body.subarray(index * PART, (index + 1) * PART)), `part ${index}`);
        arrived.push(index);
        firstCame();
      });
      await first;
      assert.deepEqual(arrived, [0], 'the first part, while the rest is held back');
      sendRest();
      const all = await parts;
      assert.deepEqual(arrived, [0, 1, 2]);
      assert.ok(Buffer.concat(all).equals(body));
      assert.deepEqual(
        all.map((part) => part.length),
        [PART, PART, 100],
      );
    } finally {
      get.close();
      server.close();
    }
  });
});
