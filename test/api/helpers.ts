import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/api/server.js';
import type { ContentType, Survey } from '../../src/catalogue/survey.js';
import type { Clock } from '../../src/clock.js';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { testClock } from '../support/clock.js';
import { noteSecret, watchedLogStream, watchIssuedSecrets } from '../support/secret-watch.js';

/**
 * A real server on a random loopback port over a temp data dir, with its log lines captured (and
 * watched for secrets: the keys and tokens its services issue must never be in them, see
 * test/support/secret-watch.ts).
 */
export interface ApiFixture {
  dir: string;
  services: Services;
  app: FastifyInstance;
  baseUrl: string;
  logs: string[];
  get(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export interface FixtureOptions {
  /** The service's one clock (default: a clock standing at TEST_NOW). */
  now?: Clock;
  /** Replace parts of the services (e.g. a failing catalogue) before the server is built. */
  adjust?: (services: Services) => Services;
  /** More configuration (NADIR_STORAGE, ...) on top of a fresh data folder. */
  env?: NodeJS.ProcessEnv;
}

export async function startApi(options: FixtureOptions = {}): Promise<ApiFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'nadir-api-'));
  const config = parseConfig({ NADIR_DATA_DIR: dir, NADIR_LOG_LEVEL: 'info', ...options.env }, dir);
  const logs: string[] = [];
  const real = watchIssuedSecrets(
    await createServices(config, options.now ?? testClock().now, { logStream: watchedLogStream(logs, dir) }),
  );
  const services = options.adjust ? options.adjust(real) : real;
  const app = await buildServer(services);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    dir,
    services,
    app,
    baseUrl: address,
    logs,
    get: (path, init) => fetch(`${address}${path}`, init),
    async close() {
      await app.close();
      await real.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An account with a key; `raster` false gives one without the raster subscription. */
export async function createKey(services: Services, name: string, raster = true) {
  const account = await services.accounts.createAccount({ name, rasterSubscription: raster, monthlyAllowance: 100 });
  const key = await services.accounts.issueApiKey(account.id);
  noteSecret(key.key);
  return { account, key: key.key, keyId: key.id };
}

export interface SurveySpec {
  id: string;
  captureDate: string;
  lastPhotoTime?: string;
  /** WGS84 rectangle [minLon, minLat, maxLon, maxLat]. */
  box: [number, number, number, number];
  types?: ContentType[];
  tags?: string[];
  gsd?: number;
}

/** A hand-made catalogue entry (no files): enough for every coverage query. */
export function makeSurvey(spec: SurveySpec): Survey {
  const [minLon, minLat, maxLon, maxLat] = spec.box;
  const types = spec.types ?? ['Vert', 'TrueOrtho', 'DetailDsm'];
  const assets: Survey['assets'] = {};
  for (const [index, type] of types.entries()) {
    assets[type] = {
      type,
      uri: `file:///nowhere/${spec.id}/${type}.tif`,
      gsd: (spec.gsd ?? 0.075) * (index + 1),
      maxZoom: 21 - index,
      minZoom: 14,
      bounds: { minX: 0, minY: 0, maxX: 1, maxY: 1 },
      width: 1,
      height: 1,
      kind: type === 'DetailDsm' ? 'elevation' : 'rgb',
      version: 1,
    };
  }
  return {
    id: spec.id,
    captureDate: spec.captureDate,
    firstPhotoTime: `${spec.captureDate}T01:00:00.000Z`,
    lastPhotoTime: spec.lastPhotoTime ?? `${spec.captureDate}T02:00:00.000Z`,
    tags: spec.tags ?? [],
    footprint: [
      [
        [
          [minLon, minLat],
          [maxLon, minLat],
          [maxLon, maxLat],
          [minLon, maxLat],
          [minLon, minLat],
        ],
      ],
    ],
    version: 1,
    assets,
    ingestedAt: '2025-01-01T00:00:00.000Z',
  };
}

export const REALDATA = join(import.meta.dirname, '..', '..', '..', 'shared', 'realdata');
export const realdataMissing = existsSync(REALDATA) ? false : `real rasters not found at ${REALDATA}`;

/** Parses a JSON body and checks the error contract that every failure must meet. */
export async function errorBody(response: Response): Promise<{ error: string; code: string; parameter?: string }> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('application/json')) throw new Error(`error with content-type ${type}`);
  const body = (await response.json()) as { error: string; code: string; parameter?: string };
  if (typeof body.error !== 'string' || typeof body.code !== 'string') {
    throw new Error(`error body without error/code: ${JSON.stringify(body)}`);
  }
  return body;
}
