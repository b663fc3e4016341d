/** A real `nadir serve` over the demo town, shared by the GIS tests of one file. */
import { type DemoTown, demoTown } from '../support/demo-town.js';
import { type NadirServer, startNadirServer } from '../support/nadir-process.js';
import { freePort } from '../support/servers.js';

/** The demo town's surveys (packages/demo-town), oldest first. */
export const OLD = '6f1c2a9e-3b7d-4e51-9a0c-2d4e8b1f7a01'; // 2024-03-14
export const MID = '0b8e4d27-91c3-4f6a-b2e5-7c9d1a3e5f02'; // 2025-04-02
export const NEW = 'd3a5f7c1-6e2b-4c89-8f14-5b0a9e2c7d03'; // 2025-10-20, disaster:hurricane

export interface GisServer {
  town: DemoTown;
  server: NadirServer;
  base: string;
  key: string;
  /** GET with the key in the query (`key: 'header'` sends it as `Authorization: Apikey`). */
  get(path: string, key?: 'query' | 'header' | 'none'): Promise<Response>;
}

export async function startGisServer(): Promise<GisServer> {
  const town = await demoTown();
  const server = await startNadirServer({ NADIR_DATA_DIR: town.dataDir, NADIR_LOG_LEVEL: 'warn' }, await freePort());
  const key = town.apiKey;
  return {
    town,
    server,
    base: server.url,
    key,
    get(path, how = 'query') {
      const url = new URL(path, server.url);
      if (how === 'query') url.searchParams.set('apikey', key);
      const headers: Record<string, string> = how === 'header' ? { authorization: `Apikey ${key}` } : {};
      return fetch(url, { headers });
    },
  };
}
