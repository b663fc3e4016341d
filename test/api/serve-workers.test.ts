/**
 * `nadir serve --workers 2`: two real processes share the port and one rate limit per key (leased
 * from the primary, or counted in Redis when it is configured), and SIGTERM stops them all.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createServices } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { leaseSize } from '../../src/limits/rate-lease.js';
import { realClockEnvironment, testClock } from '../support/clock.js';
import { PROJECT_ROOT, run, tempDir } from '../support/fixtures.js';
import { freePort, type RedisServer, SKIP_REDIS, startRedis } from '../support/servers.js';
import { createKey } from './helpers.js';

/** One request on its own connection, so the cluster may hand it to either worker. */
function get(port: number, path: string): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

for (const withRedis of [false, true]) {
  describe(`nadir serve --workers 2, rate limits ${withRedis ? 'in Redis' : 'leased from the primary'}`, {
    skip: withRedis && SKIP_REDIS,
  }, () => {
    let redis: RedisServer | undefined;
    let scratch: { path: string; remove: () => Promise<void> };
    let child: ChildProcess;
    let port: number;
    let key: string;
    let exited: Promise<number | null>;

    before(async () => {
      scratch = await tempDir('serve-workers');
      if (withRedis) redis = await startRedis();
      const services = await createServices(
        parseConfig({ NADIR_DATA_DIR: scratch.path }, scratch.path),
        testClock().now,
      );
      const created = await createKey(services, 'limited');
      await services.accounts.setTileRateLimit(created.account.id, 10, 3600);
      key = created.key;
      await services.close();
      port = await freePort();
      child = spawn(process.execPath, ['bin/nadir', 'serve', '--workers', '2'], {
        cwd: PROJECT_ROOT,
        env: {
          ...process.env,
          NADIR_DATA_DIR: scratch.path,
          NADIR_PORT: String(port),
          NADIR_HOST: '127.0.0.1',
          NADIR_LOG_LEVEL: 'warn',
          ...(redis ? { NADIR_REDIS_URL: redis.url } : {}),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
      for (let attempt = 0; attempt < 200; attempt++) {
        const up = await get(port, '/health').catch(() => undefined);
        if (up?.status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    });
    after(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await redis?.stop();
      await scratch.remove();
    });

    it('both workers answer, and together admit the key limit, never more', async () => {
      const answers = await Promise.all(
        Array.from({ length: 16 }, () => get(port, `/tiles/v3/Vert/3/0/0.jpg?apikey=${key}`)),
      );
      const statuses = answers.map((a) => a.status).sort();
      const answered = statuses.filter((s) => s !== 429);
      // Redis counts every take in one place: exactly the limit. Leases (limits/rate-lease.ts) may
      // refuse up to (workers - 1) x 1.5 leases early, a lease being 1 here: 9 or 10.
      const fewest = redis ? 10 : 10 - Math.floor(1.5 * leaseSize(10, 2));
      assert.ok(answered.length >= fewest && answered.length <= 10, `${answered.length} answered`);
      assert.deepEqual(answered, Array(answered.length).fill(404), 'no imagery here');
      assert.equal(statuses.filter((s) => s === 429).length, 16 - answered.length);
      const refused = answers.find((a) => a.status === 429);
      assert.equal(refused?.headers['x-ratelimit-remaining'], '0');
      if (redis) {
        const { stdout } = await run('redis-cli', ['-p', String(redis.port), '--scan', '--pattern', 'nadir:tiles:*'], {
          env: realClockEnvironment(),
          timeout: 30_000,
        });
        assert.equal(stdout.trim().split('\n').length, 1, 'the workers counted in Redis');
      }
    });

    it('SIGTERM stops the primary and every worker', async () => {
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      await assert.rejects(get(port, '/health'));
    });
  });
}
