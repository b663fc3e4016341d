/**
 * Bytes no engine can hold (issue 32): a NUL in a survey id, a baseline or any declared parameter
 * is a 400 in the error JSON on SQLite and on a real PostgreSQL alike (PostgreSQL used to answer
 * 500: `invalid byte sequence for encoding "UTF8": 0x00`), and the server logs no failure.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type PostgresServer, SKIP_POSTGRES, startPostgres } from '../support/servers.js';
import { type ApiFixture, createKey, startApi } from './helpers.js';

const NUL_ID = 'a%00b';
const UUID = '5a4d0000-0000-4000-8000-00000000000f';

function requests(key: string): string[] {
  const k = `apikey=${key}`;
  const aoi = 'point=-85.4,29.9&radius=50&size=100';
  return [
    `/stac/v1/search?ids=${NUL_ID}&${k}`,
    `/stac/v1/search?ids=${UUID},${NUL_ID}&${k}`,
    `/stac/v1/collections/surveys/items/${NUL_ID}?${k}`,
    `/tiles/v3/surveys/${NUL_ID}/Vert/tilejson.json?${k}`,
    `/tiles/v3/surveys/${NUL_ID}/Vert/18/70000/100000.jpg?${k}`,
    `/staticmap/v2/surveys/${NUL_ID}/Vert.tif?${aoi}&${k}`,
    `/staticmap/v2/surveys/${NUL_ID}/DsmChange.tif?${aoi}&${k}`,
    `/staticmap/v2/surveys/${UUID}/DsmChange.tif?baseline=${NUL_ID}&${aoi}&${k}`,
    `/tiles/v3/DsmChange/18/70000/100000.png?after=${NUL_ID}&${k}`,
    `/tiles/v3/DsmChange/18/70000/100000.png?baseline=${NUL_ID}&${k}`,
    `/staticmap/v2/coverage.json?point=-85.4,29.9&radius=50&resources=Vert&filter=a%00b&${k}`,
  ];
}

for (const engine of ['SQLite', 'PostgreSQL'] as const) {
  describe(`a NUL byte in a parameter, on ${engine}`, {
    skip: engine === 'PostgreSQL' && SKIP_POSTGRES,
  }, () => {
    let pg: PostgresServer | undefined;
    let api: ApiFixture;
    let key: string;

    before(async () => {
      let env: Record<string, string> = {};
      if (engine === 'PostgreSQL') {
        pg = await startPostgres();
        env = { NADIR_DATABASE: await pg.createDatabase('nul'), NADIR_TOKEN_SECRETS: `k1:${'A'.repeat(43)}=` };
      }
      api = await startApi({ env });
      key = (await createKey(api.services, 'nul')).key;
    });
    after(async () => {
      await api?.close();
      await pg?.stop();
    });

    test('is a 400 INVALID_PARAMETER in the error JSON, never a 5xx, and logs no failure', async () => {
      for (const path of requests(key)) {
        const response = await api.get(path);
        const body = (await response.json()) as { code: string; error: string };
        const shown = path.replace(key, 'KEY');
        assert.equal(response.status, 400, `${shown}: ${JSON.stringify(body)}`);
        assert.equal(body.code, 'INVALID_PARAMETER', shown);
        assert.match(response.headers.get('content-type') ?? '', /application\/json/);
      }
      assert.deepEqual(
        api.logs.filter((line) => /"level":(50|60)/.test(line)),
        [],
        'no error logged',
      );
    });
  });
}
