/**
 * The logger's second belts (src/api/http/log-safety.ts): error messages and stacks, and any header
 * object or request that reaches a log line, never carry a key or a token. (The access log's URL
 * rule is attacked over HTTP in log-secrets.test.ts.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateApiKey } from '../../src/accounts/api-key.js';
import { createLogger, loggableUrl, redactSecrets } from '../../src/api/http/log-safety.js';
import { SecretPieces } from '../support/secret-pieces.js';

const KEY = generateApiKey().key;
/** A key whose secret has no digit (about one key in 150): its cut-off tail must go too. */
const KEY_WITHOUT_DIGITS = 'nadir_0123456789ab_yNzcC_MOq_fMKAGBjlirmQJgovujOOQbwKGOAfiGQAY';
const TOKEN = `t1.k1.${Buffer.from('an example token body, long enough to look like one').toString('base64url')}`;

describe('log safety belts', () => {
  const pieces = new SecretPieces();
  pieces.add(KEY, 'key');
  pieces.add(TOKEN, 'token');
  pieces.add(KEY_WITHOUT_DIGITS, 'digitless key');

  function logged(write: (log: ReturnType<typeof createLogger>) => void): string[] {
    const lines: string[] = [];
    write(createLogger('debug', 'test', { write: (line) => lines.push(line) }));
    return lines;
  }

  it('error messages and stacks lose keys and tokens, whole or cut short', () => {
    for (const secret of [
      KEY,
      KEY.slice(0, -1),
      KEY.slice(19),
      KEY_WITHOUT_DIGITS.slice(19),
      TOKEN,
      TOKEN.slice(6),
      TOKEN.slice(0, -1),
    ]) {
      const error = new Error(`could not open /data/${secret}/x.tif for ${secret}`);
      const lines = logged((log) => log.error({ err: error }, 'failed'));
      assert.deepEqual(pieces.findIn(lines.join('\n')), [], secret);
      assert.match(redactSecrets(`a ${secret} b`), /^a \[REDACTED\] b$/);
    }
    assert.equal(
      redactSecrets('at open (/work/src/raster/engine.ts:12:5) 6f1c2a9e-3b7d'),
      'at open (/work/src/raster/engine.ts:12:5) 6f1c2a9e-3b7d',
    );
  });

  it('a header object or a request logged by accident shows names, never values', () => {
    const headers = { authorization: `Apikey ${KEY}`, cookie: `t=${TOKEN}`, [KEY]: '1', 'x-request-id': KEY };
    const lines = logged((log) => {
      log.info({ headers }, 'headers');
      log.info({ req: { method: 'GET', url: `/tiles/${KEY}?apikey=${KEY}&t=${TOKEN}`, headers } }, 'request');
    });
    assert.deepEqual(pieces.findIn(lines.join('\n')), []);
    assert.match(lines[0] as string, /"authorization":"\[REDACTED\]"/);
    assert.match(lines[1] as string, /"url":"\/tiles\/\[REDACTED\]\?apikey=\[REDACTED\]&t=\[REDACTED\]"/);
  });

  it('long URLs are cut', () => {
    const url = loggableUrl(`/staticmap/v2/coverage.json?${'radius=5&'.repeat(2000)}`);
    assert.ok(url.length < 2100 && url.endsWith('...'), `${url.length}`);
  });
});
