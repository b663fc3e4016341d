import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { isNadirError } from '../../src/errors.js';

const cwd = resolve('/srv/nadir-test');

/** Asserts parseConfig throws INVALID_CONFIG naming `variable` and quoting the bad value. */
function assertInvalid(env: NodeJS.ProcessEnv, variable: string, value: string): void {
  assert.throws(
    () => parseConfig(env, cwd),
    (error: unknown) => {
      assert.ok(isNadirError(error), 'a NadirError');
      assert.equal(error.code, 'INVALID_CONFIG');
      assert.equal(error.details.variable, variable);
      assert.match(error.message, new RegExp(`^${variable} `));
      assert.ok(error.message.includes(JSON.stringify(value)), `message quotes the value: ${error.message}`);
      return true;
    },
    `${variable}=${JSON.stringify(value)}`,
  );
}

describe('parseConfig defaults', () => {
  it('uses ./data under cwd, nadir.sqlite in it, port 8080, info logs', () => {
    const config = parseConfig({}, cwd);
    assert.match(config.serverId, /^.+:\d+$/, 'hostname:pid');
    assert.deepEqual(config, {
      dataDir: join(cwd, 'data'),
      database: { engine: 'sqlite', path: join(cwd, 'data', 'nadir.sqlite') },
      storage: { kind: 'local', root: join(cwd, 'data') },
      redisUrl: undefined,
      redisTimeoutMs: 50,
      serverId: config.serverId,
      host: '0.0.0.0',
      port: 8080,
      logLevel: 'info',
      tokenSecrets: undefined,
      publicUrl: undefined,
      rasterBudgetMb: 1024,
      rasterQueueMs: 10_000,
      tileCacheMb: 256,
      ingestJobTimeoutS: 900,
      ingestQueueCheckS: 60,
      ingestJpegQuality: 95,
      coverageCacheMb: 64,
      workers: 1,
      http: { headersTimeoutMs: 60_000, requestTimeoutMs: 300_000, keepAliveTimeoutMs: 72_000 },
    });
  });

  it('reads the tile cache size and the number of serve workers', () => {
    const config = parseConfig({ NADIR_TILE_CACHE_MB: '64', NADIR_WORKERS: '3' }, cwd);
    assert.equal(config.tileCacheMb, 64);
    assert.equal(config.workers, 3);
    assert.ok(parseConfig({ NADIR_WORKERS: 'auto' }, cwd).workers >= 1);
    assert.throws(() => parseConfig({ NADIR_WORKERS: '0' }, cwd), /NADIR_WORKERS/);
    assert.throws(() => parseConfig({ NADIR_INGEST_JPEG_QUALITY: '30' }, cwd), /NADIR_INGEST_JPEG_QUALITY/);
    assert.equal(parseConfig({ NADIR_INGEST_JPEG_QUALITY: '90' }, cwd).ingestJpegQuality, 90);
    assert.throws(() => parseConfig({ NADIR_WORKERS: 'many' }, cwd), /NADIR_WORKERS/);
    assert.throws(() => parseConfig({ NADIR_TILE_CACHE_MB: '-1' }, cwd), /NADIR_TILE_CACHE_MB/);
    assert.equal(parseConfig({ NADIR_COVERAGE_CACHE_MB: '0' }, cwd).coverageCacheMb, 0);
    assert.throws(() => parseConfig({ NADIR_COVERAGE_CACHE_MB: 'lots' }, cwd), /NADIR_COVERAGE_CACHE_MB/);
  });

  it('reads the imagery admission settings and refuses nonsense', () => {
    const config = parseConfig({ NADIR_RASTER_BUDGET_MB: '256', NADIR_RASTER_QUEUE_MS: '0' }, cwd);
    assert.equal(config.rasterBudgetMb, 256);
    assert.equal(config.rasterQueueMs, 0);
    assert.throws(() => parseConfig({ NADIR_RASTER_BUDGET_MB: '10' }, cwd), /NADIR_RASTER_BUDGET_MB/);
    assert.throws(() => parseConfig({ NADIR_RASTER_QUEUE_MS: '-5' }, cwd), /NADIR_RASTER_QUEUE_MS/);
  });

  it('reads the HTTP timeouts and refuses a request timeout shorter than the head timeout', () => {
    const config = parseConfig(
      {
        NADIR_HTTP_HEADERS_TIMEOUT_MS: '1500',
        NADIR_HTTP_REQUEST_TIMEOUT_MS: '0',
        NADIR_HTTP_KEEP_ALIVE_TIMEOUT_MS: '5000',
      },
      cwd,
    );
    assert.deepEqual(config.http, { headersTimeoutMs: 1500, requestTimeoutMs: 0, keepAliveTimeoutMs: 5000 });
    assertInvalid({ NADIR_HTTP_HEADERS_TIMEOUT_MS: '0' }, 'NADIR_HTTP_HEADERS_TIMEOUT_MS', '0');
    assertInvalid({ NADIR_HTTP_HEADERS_TIMEOUT_MS: '1s' }, 'NADIR_HTTP_HEADERS_TIMEOUT_MS', '1s');
    assertInvalid({ NADIR_HTTP_KEEP_ALIVE_TIMEOUT_MS: '-1' }, 'NADIR_HTTP_KEEP_ALIVE_TIMEOUT_MS', '-1');
    assertInvalid(
      { NADIR_HTTP_HEADERS_TIMEOUT_MS: '20000', NADIR_HTTP_REQUEST_TIMEOUT_MS: '10000' },
      'NADIR_HTTP_REQUEST_TIMEOUT_MS',
      '10000',
    );
    assertInvalid({ NADIR_HTTP_HEADERS_TIMEOUT_MS: '400000' }, 'NADIR_HTTP_REQUEST_TIMEOUT_MS', '300000');
  });

  it('treats empty variables as unset', () => {
    const empty = {
      NADIR_DATA_DIR: '',
      NADIR_DATABASE: '',
      NADIR_PORT: '',
      NADIR_LOG_LEVEL: '',
      NADIR_PUBLIC_URL: '',
      NADIR_HOST: '',
      NADIR_TOKEN_SECRETS: '',
    };
    assert.deepEqual(parseConfig(empty, cwd), parseConfig({}, cwd));
  });

  it('ignores unrelated variables', () => {
    assert.deepEqual(parseConfig({ PORT: '1', LOG_LEVEL: 'nope', HOME: '/x' }, cwd), parseConfig({}, cwd));
  });
});

describe('parseConfig overrides', () => {
  it('resolves a relative data dir against cwd and keeps the database inside it', () => {
    const config = parseConfig({ NADIR_DATA_DIR: 'var/nadir' }, cwd);
    assert.equal(config.dataDir, join(cwd, 'var', 'nadir'));
    assert.deepEqual(config.database, { engine: 'sqlite', path: join(cwd, 'var', 'nadir', 'nadir.sqlite') });
  });

  it('takes an absolute data dir as is', () => {
    const config = parseConfig({ NADIR_DATA_DIR: '/mnt/imagery' }, cwd);
    assert.equal(config.dataDir, '/mnt/imagery');
    assert.deepEqual(config.database, { engine: 'sqlite', path: '/mnt/imagery/nadir.sqlite' });
  });

  it('takes NADIR_DATABASE: absolute, relative to cwd, or :memory:', () => {
    const path = (database: string) => {
      const parsed = parseConfig({ NADIR_DATABASE: database }, cwd).database;
      return parsed.engine === 'sqlite' ? parsed.path : parsed.url;
    };
    assert.equal(path('/db/cat.sqlite'), '/db/cat.sqlite');
    assert.equal(path('db/cat.sqlite'), join(cwd, 'db', 'cat.sqlite'));
    assert.equal(path(':memory:'), ':memory:');
    // The data dir is unaffected by where the database lives.
    assert.equal(parseConfig({ NADIR_DATABASE: '/db/cat.sqlite' }, cwd).dataDir, join(cwd, 'data'));
  });

  it('takes a postgres:// or postgresql:// URL as PostgreSQL, never as a file name', () => {
    for (const url of [
      'postgres://nadir@db.internal:5432/nadir',
      'postgresql://u:secret@10.0.0.5/imagery?sslmode=require',
    ]) {
      assert.deepEqual(parseConfig({ NADIR_DATABASE: url }, cwd).database, {
        engine: 'postgres',
        url,
        timeoutMs: 2000,
        connections: 20,
      });
    }
  });

  it('takes NADIR_DATABASE_CONNECTIONS for PostgreSQL, an integer from 1 to 1000', () => {
    const url = 'postgres://nadir@db.internal:5432/nadir';
    const database = parseConfig({ NADIR_DATABASE: url, NADIR_DATABASE_CONNECTIONS: '4' }, cwd).database;
    assert.deepEqual(database, { engine: 'postgres', url, timeoutMs: 2000, connections: 4 });
    for (const bad of ['0', '1001', 'four', '2.5']) {
      assert.throws(
        () => parseConfig({ NADIR_DATABASE: url, NADIR_DATABASE_CONNECTIONS: bad }, cwd),
        /NADIR_DATABASE_CONNECTIONS must be an integer from 1 to 1000/,
      );
    }
  });

  it('takes NADIR_STORAGE: a folder, s3://bucket/prefix with the AWS variables, or an http(s) base', () => {
    assert.deepEqual(parseConfig({ NADIR_STORAGE: 'cogs' }, cwd).storage, { kind: 'local', root: join(cwd, 'cogs') });
    const s3 = parseConfig(
      {
        NADIR_STORAGE: 's3://survey-imagery/prod/',
        NADIR_S3_ENDPOINT: 'http://127.0.0.1:9000',
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIA',
        AWS_SECRET_ACCESS_KEY: 'secret',
        NADIR_STORAGE_TIMEOUT_MS: '2500',
      },
      cwd,
    ).storage;
    assert.deepEqual(s3, {
      kind: 's3',
      bucket: 'survey-imagery',
      prefix: 'prod',
      region: 'eu-west-1',
      timeoutMs: 2500,
      cacheMb: 64,
      endpoint: 'http://127.0.0.1:9000',
      credentials: { accessKeyId: 'AKIA', secretAccessKey: 'secret' },
    });
    assert.deepEqual(parseConfig({ NADIR_STORAGE: 'https://cdn.example.com/imagery/' }, cwd).storage, {
      kind: 'http',
      base: 'https://cdn.example.com/imagery',
      timeoutMs: 10_000,
      cacheMb: 64,
    });
    const uncached = parseConfig({ NADIR_STORAGE: 's3://b-1/x', NADIR_STORAGE_CACHE_MB: '0' }, cwd).storage;
    assert.equal(uncached.kind === 's3' && uncached.cacheMb, 0);
  });

  it('NADIR_STORAGE: another scheme, a bad bucket name or a bad endpoint is refused', () => {
    for (const value of ['ftp://host/x', 's3://', 's3://UPPER/x', 's3://a/x']) {
      assertInvalid({ NADIR_STORAGE: value }, 'NADIR_STORAGE', value);
    }
    assertInvalid({ NADIR_S3_ENDPOINT: 'minio:9000' }, 'NADIR_S3_ENDPOINT', 'minio:9000');
    assertInvalid({ NADIR_STORAGE: 's3://b-1/x', NADIR_STORAGE_CACHE_MB: '64MB' }, 'NADIR_STORAGE_CACHE_MB', '64MB');
  });

  it('takes NADIR_REDIS_URL and NADIR_SERVER_ID', () => {
    const config = parseConfig({ NADIR_REDIS_URL: 'redis://cache:6379/0', NADIR_SERVER_ID: 'tiles-3' }, cwd);
    assert.equal(config.redisUrl, 'redis://cache:6379/0');
    assert.equal(config.serverId, 'tiles-3');
  });

  it('takes port, host, log level, public URL and token secrets', () => {
    const config = parseConfig(
      {
        NADIR_PORT: '9090',
        NADIR_HOST: '127.0.0.1',
        NADIR_LOG_LEVEL: 'debug',
        NADIR_PUBLIC_URL: 'https://imagery.example.org/nadir',
        NADIR_TOKEN_SECRETS: 'k1:abc',
      },
      cwd,
    );
    assert.equal(config.port, 9090);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.publicUrl, 'https://imagery.example.org/nadir');
    assert.equal(config.tokenSecrets, 'k1:abc');
  });

  it('accepts the port range ends and every log level', () => {
    assert.equal(parseConfig({ NADIR_PORT: '0' }, cwd).port, 0);
    assert.equal(parseConfig({ NADIR_PORT: '65535' }, cwd).port, 65535);
    assert.equal(parseConfig({ NADIR_PORT: '080' }, cwd).port, 80);
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
      assert.equal(parseConfig({ NADIR_LOG_LEVEL: level }, cwd).logLevel, level);
    }
    assert.equal(parseConfig({ NADIR_PUBLIC_URL: 'http://localhost:8080' }, cwd).publicUrl, 'http://localhost:8080');
  });
});

describe('parseConfig rejects bad values with INVALID_CONFIG naming the variable', () => {
  it('NADIR_PORT', () => {
    for (const value of ['abc', '70000', '65536', '-1', '8080x', '80.5', '1e3', '0x50', '+80']) {
      assertInvalid({ NADIR_PORT: value }, 'NADIR_PORT', value);
    }
  });

  it('NADIR_LOG_LEVEL (case-sensitive)', () => {
    for (const value of ['verbose', 'INFO', 'Debug', 'warning', ' info']) {
      assertInvalid({ NADIR_LOG_LEVEL: value }, 'NADIR_LOG_LEVEL', value);
    }
  });

  it('NADIR_PUBLIC_URL', () => {
    for (const value of ['example.org', 'ftp://example.org', 'https://', 'http://exa mple.org', '/nadir', 'https:/x']) {
      assertInvalid({ NADIR_PUBLIC_URL: value }, 'NADIR_PUBLIC_URL', value);
    }
  });

  it('NADIR_DATABASE: a URL of another engine, or a postgres URL without host or database', () => {
    for (const value of [
      'mysql://db/nadir',
      'redis://cache/0',
      'postgres://',
      'postgres://db.internal',
      'postgres:///nadir',
    ]) {
      assertInvalid({ NADIR_DATABASE: value }, 'NADIR_DATABASE', value);
    }
  });

  it('NADIR_DATABASE and NADIR_REDIS_URL errors never show a password', () => {
    assert.throws(
      () => parseConfig({ NADIR_DATABASE: 'mysql://admin:hunter2@db/nadir' }, cwd),
      (error: Error) => {
        assert.ok(!error.message.includes('hunter2'), error.message);
        return true;
      },
    );
    assert.throws(
      () => parseConfig({ NADIR_REDIS_URL: 'http://admin:hunter2@cache' }, cwd),
      (error: Error) => {
        assert.ok(!error.message.includes('hunter2'), error.message);
        return true;
      },
    );
  });

  it('NADIR_REDIS_URL', () => {
    for (const value of ['localhost:6379', 'http://cache:6379', 'redis://', 'cache']) {
      assertInvalid({ NADIR_REDIS_URL: value }, 'NADIR_REDIS_URL', value);
    }
  });

  it('reports the first bad variable even when others are fine', () => {
    assertInvalid({ NADIR_DATA_DIR: '/ok', NADIR_PORT: '99999' }, 'NADIR_PORT', '99999');
  });
});
