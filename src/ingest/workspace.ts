import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Ingest's local working area, whatever the storage the survey files end up in:
 *   <data>/staging/<id>.<pid>.<random>/   COGs being written; uploaded (or moved) into storage
 *   <data>/locks/<id>.lock                one ingest per survey id at a time on this machine
 */
export class IngestWorkspace {
  readonly #root: string;

  constructor(dataDir: string) {
    this.#root = dataDir;
  }

  async createStaging(id: string): Promise<string> {
    const dir = join(this.#root, 'staging', `${id}.${process.pid}.${randomBytes(4).toString('hex')}`);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /** Removes staging folders of processes that are gone (a crashed or killed ingest). */
  async removeAbandonedStaging(): Promise<void> {
    const staging = join(this.#root, 'staging');
    for (const name of await listDir(staging)) {
      const pid = Number(name.split('.')[1]);
      if (!Number.isInteger(pid) || !isAlive(pid)) await rm(join(staging, name), { recursive: true, force: true });
    }
  }

  /** An exclusive lock per survey id; a lock whose process died is taken over. */
  async lock(id: string): Promise<() => Promise<void>> {
    const dir = join(this.#root, 'locks');
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${id}.lock`);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await writeFile(path, String(process.pid), { flag: 'wx' });
        return () => rm(path, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const owner = Number((await readText(path)).trim());
        if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
          throw new Error(`survey ${id} is being ingested by process ${owner}`);
        }
        await rm(path, { force: true });
      }
    }
    throw new Error(`could not lock survey ${id}`);
  }
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

async function readText(path: string): Promise<string> {
  return readFile(path, 'utf8').catch(() => '');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
