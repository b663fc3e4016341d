import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { cliArgs, PROJECT_ROOT } from './fixtures.js';
import { noteSecret } from './secret-watch.js';

const exec = promisify(execFile);

/**
 * The full demo town, made by the real `nadir demo` once per checkout and shared by every test
 * file that needs it (a run of the generator plus ingest is about a minute). Kept under .tmp/
 * (ignored by git); a lock folder serialises test files that ask for it at the same time.
 */
export const DEMO_DATA_DIR = join(PROJECT_ROOT, '.tmp', 'test-demo-town');
const LOCK = `${DEMO_DATA_DIR}.lock`;

export interface DemoTown {
  dataDir: string;
  apiKey: string;
  surveys: { id: string; captureDate: string; name: string }[];
}

async function withLock<T>(work: () => Promise<T>): Promise<T> {
  await mkdir(join(PROJECT_ROOT, '.tmp'), { recursive: true });
  for (;;) {
    try {
      await mkdir(LOCK);
      break;
    } catch {
      const owner = Number(await readFile(join(LOCK, 'pid'), 'utf8').catch(() => '0'));
      if (owner > 0 && !isAlive(owner)) await rm(LOCK, { recursive: true, force: true });
      else await sleep(500);
    }
  }
  await writeFile(join(LOCK, 'pid'), String(process.pid));
  try {
    return await work();
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function demoTown(): Promise<DemoTown> {
  return withLock(async () => {
    // `nadir demo` is idempotent: after the first run it only checks and prints the key.
    const { stdout } = await exec(process.execPath, cliArgs('demo', '--json'), {
      cwd: PROJECT_ROOT,
      env: { ...process.env, NADIR_DATA_DIR: DEMO_DATA_DIR, NADIR_LOG_LEVEL: 'warn' },
      maxBuffer: 16 << 20,
      timeout: 600_000,
    });
    const result = JSON.parse(stdout) as { apiKey: string; surveys: DemoTown['surveys'] };
    noteSecret(result.apiKey);
    return { dataDir: DEMO_DATA_DIR, apiKey: result.apiKey, surveys: result.surveys };
  });
}
