/**
 * One clock for the whole service: a server built on a clock set years away from today stamps,
 * bills, limits and filters by that clock alone. A part that read the wall clock instead (as the
 * token codec once did) shows here as today's date where the clock's was expected.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ApiFixture, createKey, startApi } from '../api/helpers.js';
import { testClock } from '../support/clock.js';
import { PROJECT_ROOT, REALDATA, SKIP_REALDATA, writeManifest } from '../support/fixtures.js';

const INSTANT = '2031-05-05T05:05:05.000Z';
const POINT = { lon: -91.99381, lat: 46.84265 };

describe('one clock', { skip: SKIP_REALDATA }, () => {
  const clock = testClock(INSTANT);
  let api: ApiFixture;
  let key: string;
  let accountId: string;
  let surveyId: string;

  before(async () => {
    api = await startApi({ now: clock.now });
    const manifest = await writeManifest(api.dir, 'duluth', {
      captureDate: '2031-04-20',
      assets: { TrueOrtho: join(REALDATA, 'webodm/orthophoto.tif'), Vert: join(REALDATA, 'webodm/orthophoto.tif') },
    });
    surveyId = (await api.services.ingestor.ingestManifestFile(manifest)).id;
    const created = await createKey(api.services, 'clockwork');
    key = created.key;
    accountId = created.account.id;
  });
  after(() => api.close());

  it('stamps surveys, accounts and keys with the clock', async () => {
    assert.equal((await api.services.catalogue.get(surveyId))?.ingestedAt, INSTANT);
    assert.equal((await api.services.accounts.getAccount(accountId))?.createdAt, INSTANT);
    const [keyInfo] = await api.services.accounts.listApiKeys(accountId);
    assert.equal(keyInfo?.createdAt, INSTANT);
  });

  it('counts relative dates back from the clock', async () => {
    const ids = async (since: string) => {
      const r = await api.get(
        `/staticmap/v2/coverage.json?apikey=${key}&point=${POINT.lon},${POINT.lat}&radius=20&resources=TrueOrtho&since=${since}`,
      );
      assert.equal(r.status, 200, await r.clone().text());
      return ((await r.json()) as { surveys: { id: string }[] }).surveys.map((s) => s.id);
    };
    assert.deepEqual(await ids('30D'), [surveyId], 'captured 15 days before the clock');
    assert.deepEqual(await ids('10D'), [], 'but not within 10 days of it');
  });

  it('issues tokens, bills downloads and counts tiles in the clock month', async () => {
    const coverage = await api.get(
      `/staticmap/v2/coverage.json?apikey=${key}&point=${POINT.lon},${POINT.lat}&radius=20&resources=TrueOrtho`,
    );
    const token = ((await coverage.json()) as { transactionToken: string }).transactionToken;
    const claims = api.services.tokens.decode(token);
    assert.equal(claims.issuedAt.toISOString(), INSTANT);
    assert.equal(claims.expiresAt.toISOString(), '2031-06-04T05:05:05.000Z');
    const image = await api.get(
      `/staticmap/v2/surveys/${surveyId}/TrueOrtho.png?transactionToken=${encodeURIComponent(token)}&point=${POINT.lon},${POINT.lat}&radius=20&size=16x16`,
    );
    assert.equal(image.status, 200);

    const tile = await api.get(`/tiles/v3/Vert/18/${lonToX(POINT.lon, 18)}/${latToY(POINT.lat, 18)}.png?apikey=${key}`);
    assert.equal(tile.status, 200);
    // The rate-limit window is the clock's minute (a 60 s window by default).
    const minuteEnd = Math.floor(Date.parse(INSTANT) / 60_000) * 60 + 60;
    assert.equal(tile.headers.get('x-ratelimit-reset'), String(minuteEnd));
    await api.services.tileUsage.flush();
    assert.deepEqual((await api.services.accounts.usage(accountId)).months, [
      { month: '2031-05', transactions: 1, tiles: 1 },
    ]);
  });
});

describe('no wall clock in the service', () => {
  /** Timing a command's progress (cli/) is not the service's time; everything else takes the clock. */
  const ALLOWED = [/^src\/composition\.ts$/, /^src\/cli\//];

  it('reads Date.now() or new Date() only in the composition root', async () => {
    const root = join(PROJECT_ROOT, 'src');
    const found: string[] = [];
    for (const entry of await readdir(root, { recursive: true })) {
      if (!entry.endsWith('.ts')) continue;
      const path = relative(PROJECT_ROOT, join(root, entry));
      if (ALLOWED.some((pattern) => pattern.test(path))) continue;
      const text = await readFile(join(root, entry), 'utf8');
      for (const [index, line] of text.split('\n').entries()) {
        if (/Date\.now\(\)|new Date\(\)/.test(line)) found.push(`${path}:${index + 1}: ${line.trim()}`);
      }
    }
    assert.deepEqual(found, []);
  });
});

function lonToX(lon: number, z: number): number {
  return Math.floor(((lon + 180) / 360) * 2 ** z);
}

function latToY(lat: number, z: number): number {
  const rad = (lat * Math.PI) / 180;
  return Math.floor(((1 - Math.log(Math.tan(rad) + 1 / Math.cos(rad)) / Math.PI) / 2) * 2 ** z);
}
