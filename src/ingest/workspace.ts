import { mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Ingest's local working area, whatever the storage the survey files end up in:
 *   <data>/staging/<id>/                  COGs being written; uploaded (or moved) into storage
 *   <data>/locks/<id>.lock                one ingest (or delete) per survey id at a time on this machine
 * The locks folder goes with its last lock, so a `nadir surveys delete` on a data folder leaves
 * nothing behind (on one whose surveys are in a bucket, it is the only folder delete makes).
 */
export class IngestWorkspace {
  readonly #root: string;

  constructor(dataDir: string) {
    this.#root = dataDir;
  }

  /**
   * The survey's own staging folder, `<data>/staging/<id>/`, used under the survey's lock: what a
   * killed ingest finished stays there for the next run of the same delivery to resume from.
   */
  surveyStaging(id: string): string {
    return join(this.#root, 'staging', id);
  }

  /**
   * Removes per-process staging folders (`<id>.<pid>.<random>`) of processes that are gone. A
   * survey's resumable folder (`<id>`) stays until its ingest succeeds or starts afresh.
   */
  async removeAbandonedStaging(): Promise<void> {
    const staging = join(this.#root, 'staging');
    for (const name of await listDir(staging)) {
      if (!name.includes('.')) continue;
      const pid = Number(name.split('.')[1]);
      if (!Number.isInteger(pid) || !isAlive(pid)) await rm(join(staging, name), { recursive: true, force: true });
    }
  }

  /** An exclusive lock per survey id; a lock whose process died is taken over. */
  async lock(id: string): Promise<() => Promise<void>> {
    const dir = join(this.#root, 'locks');
    const path = join(dir, `${id}.lock`);
    let takenOver = false;
    // A few turns: another process's unlock may remove the emptied folder between our mkdir
    // and our write (ENOENT: make it again), and a dead owner's lock is taken over once.
    for (let attempt = 0; attempt < 5; attempt++) {
      await mkdir(dir, { recursive: true });
      try {
        await writeFile(path, String(process.pid), { flag: 'wx' });
        return async () => {
          await rm(path, { force: true });
          // Fails, harmlessly, while other locks are in it.
          await rmdir(dir).catch(() => undefined);
        };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') continue;
        if (code !== 'EEXIST') throw error;
        const owner = Number((await readText(path)).trim());
        if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
          throw new Error(`survey ${id} is being ingested by process ${owner}`);
        }
        if (takenOver) break;
        await rm(path, { force: true });
        takenOver = true;
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
