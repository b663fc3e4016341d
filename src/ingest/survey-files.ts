import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Where survey COGs live on local disk:
 *   <data>/surveys/<id>/v<version>/<Type>.tif   committed, referenced by the catalogue
 *   <data>/staging/<id>.<pid>.<random>/          being written; never referenced
 *   <data>/locks/<id>.lock                       one ingest per survey id at a time
 * A version folder appears by one rename, after every file in it is complete and synced.
 */
export class SurveyFiles {
  readonly #root: string;

  constructor(dataDir: string) {
    this.#root = dataDir;
  }

  versionDir(id: string, version: number): string {
    return join(this.#root, 'surveys', id, `v${version}`);
  }

  uriOf(path: string): string {
    return pathToFileURL(path).href;
  }

  pathOf(uri: string): string {
    return fileURLToPath(uri);
  }

  async createStaging(id: string): Promise<string> {
    const dir = join(this.#root, 'staging', `${id}.${process.pid}.${randomBytes(4).toString('hex')}`);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /** Makes the staged files the version's folder in one rename. */
  async commit(stagingDir: string, id: string, version: number, files: string[]): Promise<string> {
    for (const name of files) await syncFile(join(stagingDir, name));
    const target = this.versionDir(id, version);
    await mkdir(join(target, '..'), { recursive: true });
    // A folder left by a crash between rename and catalogue commit is unreferenced: replace it.
    await rm(target, { recursive: true, force: true });
    await rename(stagingDir, target);
    await syncFile(join(target, '..'));
    return target;
  }

  /** Removes staging folders of processes that are gone (a crashed or killed ingest). */
  async removeAbandonedStaging(): Promise<void> {
    const staging = join(this.#root, 'staging');
    for (const name of await listDir(staging)) {
      const pid = Number(name.split('.')[1]);
      if (!Number.isInteger(pid) || !isAlive(pid)) await rm(join(staging, name), { recursive: true, force: true });
    }
  }

  /**
   * Removes version folders of `id` that no catalogue entry references. Only for the survey
   * whose lock we hold: another process may be between rename and commit for other surveys.
   */
  async removeUnreferencedVersions(id: string, referenced: Set<string>): Promise<void> {
    const surveyDir = join(this.#root, 'surveys', id);
    for (const name of await listDir(surveyDir)) {
      const dir = join(surveyDir, name);
      const prefix = this.uriOf(dir);
      const inUse = [...referenced].some((uri) => uri.startsWith(`${prefix}/`));
      if (!inUse) await rm(dir, { recursive: true, force: true });
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

  async exists(path: string): Promise<boolean> {
    return stat(path).then(
      () => true,
      () => false,
    );
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

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
