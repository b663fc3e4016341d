/**
 * A real `nadir serve` over the demo town for the client's tests, with a database of its own: a
 * copy of the demo town's SQLite file (the survey files are read where they are), so the accounts,
 * rate limits and usage these tests change never touch the shared demo town other tests count on.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { demoTown } from '../support/demo-town.js';
import { PROJECT_ROOT, tempDir } from '../support/fixtures.js';
import { type NadirServer, nadirCommand, startNadirServer } from '../support/nadir-process.js';
import { noteSecret } from '../support/secret-watch.js';
import { freePort } from '../support/servers.js';

const run = promisify(execFile);
export const NADIR_CLIENT = join(PROJECT_ROOT, 'packages/client/bin/nadir-client.js');

export interface DemoServer {
  url: string;
  server: NadirServer;
  /** A new account with the raster subscription; returns its name and key. */
  account(
    name: string,
    rateLimit?: { limit: number; intervalSeconds: number },
  ): Promise<{ name: string; apiKey: string }>;
  /** Raster transactions billed to the account this month. */
  transactions(name: string): Promise<number>;
  /** A `nadir` operator command on this server's database; its stdout. */
  command(...args: string[]): Promise<string>;
  scratch: string;
  close(): Promise<void>;
}

/** `settings`: more of the server's configuration (NADIR_MAP_BASEMAP, ...). */
export async function startDemoServer(settings: Record<string, string> = {}): Promise<DemoServer> {
  const town = await demoTown();
  const scratch = await tempDir('client-demo');
  const database = join(scratch.path, 'nadir.sqlite');
  const source = new Database(join(town.dataDir, 'nadir.sqlite'), { readonly: true });
  await source.backup(database);
  source.close();
  const env = {
    NADIR_DATA_DIR: join(scratch.path, 'data'),
    NADIR_DATABASE: database,
    NADIR_STORAGE: town.dataDir,
    NADIR_LOG_LEVEL: 'warn',
    ...settings,
  };
  const server = await startNadirServer(env, await freePort());
  const command = async (...args: string[]) => {
    const result = await nadirCommand(env, ...args);
    if (result.code !== 0) throw new Error(`nadir ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  return {
    url: server.url,
    server,
    scratch: scratch.path,
    command,
    async account(name, rateLimit = { limit: 10_000, intervalSeconds: 60 }) {
      const created = JSON.parse(
        await command(
          'accounts',
          'create',
          '--name',
          name,
          '--raster',
          '--allowance',
          '100',
          '--rate-limit',
          String(rateLimit.limit),
          '--interval',
          String(rateLimit.intervalSeconds),
          '--json',
        ),
      ) as { apiKey: string };
      noteSecret(created.apiKey);
      return { name, apiKey: created.apiKey };
    },
    async transactions(name) {
      const usage = JSON.parse(await command('accounts', 'usage', '--account', name, '--json')) as {
        months: { transactions: number }[];
      };
      return usage.months.reduce((sum, month) => sum + month.transactions, 0);
    },
    async close() {
      await server.stop();
      await scratch.remove();
    },
  };
}

/** `nadir-client` as a customer runs it (the compiled package bin); never throws for an exit code. */
export async function nadirClient(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [NADIR_CLIENT, ...args], {
      // No user token file (~/.local/state/nadir-client) unless a test gives one: tests write no home.
      env: { ...process.env, NADIR_TOKEN_FILE: '', ...env },
      maxBuffer: 16 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
