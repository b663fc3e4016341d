/**
 * Survey files in a local folder (the embedded default: NADIR_DATA_DIR): key `surveys/...` is
 * `<root>/surveys/...`. A file is put by renaming it into place after an fsync, so it appears
 * whole or not at all; reads are preads on a handle the open-COG cache keeps, from the page cache
 * on the event loop when the bytes are there (page-cache-read.ts), else on the libuv pool.
 */
import { copyFile, type FileHandle, mkdir, open, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Source } from '@cogeotiff/core';
import { readCached } from '../native/page-cache-read.js';
import { type IntoSource, isKey, type StoredObject, type SurveyStorage } from './storage.js';

/**
 * The most bytes copied from the page cache on the event loop in one read (a tile and its mask are
 * tens of KiB): a larger read, a whole file say, would hold the loop for longer than the pool's
 * hand-off costs, so it goes to the pool.
 */
const MAX_CACHED_READ = 1024 * 1024;

/** A local file's byte ranges; the handle is opened at the first read and closed by close(). */
class FileSource implements IntoSource {
  readonly url: URL;
  readonly #path: string;
  #handle: Promise<FileHandle> | undefined;
  /** False once the file system said it cannot read from the page cache alone. */
  #cachedReads = true;

  constructor(path: string) {
    this.#path = path;
    this.url = pathToFileURL(path);
  }

  async fetch(offset: number, length?: number): Promise<ArrayBuffer> {
    const size = length ?? (await (await this.#open()).stat()).size - offset;
    // A buffer of its own (not a slice of Node's shared pool), so that its ArrayBuffer is the answer, uncopied.
    const buffer = Buffer.allocUnsafeSlow(size);
    const total = await this.fetchInto(offset, buffer);
    return total === size ? buffer.buffer : buffer.buffer.slice(0, total);
  }

  async fetchInto(offset: number, into: Uint8Array): Promise<number> {
    const handle = await this.#open();
    const size = into.byteLength;
    // What the page cache holds is copied at once (page-cache-read.ts says why); the rest, if any, on the pool.
    let done = 0;
    if (this.#cachedReads && size <= MAX_CACHED_READ) {
      const cached = readCached(handle.fd, into, offset);
      if (cached === undefined) this.#cachedReads = false;
      else done = cached;
    }
    if (done === size) return size;
    const { bytesRead } = await handle.read(into, done, size - done, offset + done);
    return done + bytesRead;
  }

  #open(): Promise<FileHandle> {
    this.#handle ??= open(this.#path, 'r');
    return this.#handle;
  }

  async close(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    await (await handle?.catch(() => undefined))?.close();
  }
}

async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class LocalStorage implements SurveyStorage {
  readonly description: string;
  readonly writable = true;
  readonly #root: string;

  constructor(root: string) {
    this.#root = root;
    this.description = root;
  }

  /** The local path of a key, or of an absolute `file:` URI (older catalogue rows). */
  pathOf(location: string): string {
    return isKey(location) ? join(this.#root, ...location.split('/')) : fileURLToPath(location);
  }

  keyOf(location: string): string | undefined {
    if (isKey(location)) return location;
    if (!location.startsWith('file:')) return undefined;
    const path = relative(this.#root, fileURLToPath(location));
    return path.startsWith('..') ? undefined : path.split(sep).join('/');
  }

  source(location: string): Source {
    return new FileSource(this.pathOf(location));
  }

  async probe(location: string): Promise<void> {
    await this.source(location).fetch(0, 1);
  }

  gdalPath(location: string): string {
    return this.pathOf(location);
  }

  async put(key: string, localFile: string): Promise<void> {
    const target = this.pathOf(key);
    await syncPath(localFile);
    // A few turns: a delete in another process removes folders it finds empty (delete below),
    // which may be this one between our mkdir and our rename: make it again.
    for (let attempt = 0; ; attempt++) {
      await mkdir(dirname(target), { recursive: true });
      try {
        await this.#moveInto(localFile, target);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 4) throw error;
      }
    }
    await syncPath(dirname(target));
  }

  async #moveInto(localFile: string, target: string): Promise<void> {
    try {
      await rename(localFile, target);
    } catch (error) {
      // Staging on another file system: copy aside, then rename into place.
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      const aside = `${target}.partial`;
      await copyFile(localFile, aside);
      await syncPath(aside);
      await rename(aside, target);
    }
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    const start = this.pathOf(prefix.replace(/\/+$/, '') || '.');
    for (const path of await filesUnder(start)) {
      const key = relative(this.#root, path).split(sep).join('/');
      if (!key.startsWith(prefix)) continue;
      const info = await stat(path).catch(() => undefined);
      if (info) yield { key, modified: info.mtime, size: info.size };
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    const surveysRoot = join(this.#root, 'surveys');
    const folders = new Set<string>();
    for (const key of keys) {
      const path = this.pathOf(key);
      await rm(path, { force: true });
      folders.add(dirname(path));
    }
    // Folders emptied by the delete go too (a survey's version folder, then the survey's), and so
    // do empty folders beside them in the survey's folder: a version folder that an ingest killed
    // between making it and moving a file in leaves empty, and that no file will ever name.
    for (const folder of folders) {
      const survey = surveyFolderOf(folder, surveysRoot);
      if (survey) await removeEmptyFolders(survey);
      await removeEmptyUpTo(folder, surveysRoot);
    }
  }

  async ping(): Promise<void> {
    await mkdir(this.#root, { recursive: true });
  }

  async close(): Promise<void> {}
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await filesUnder(path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

/** `<root>/surveys/<id>` for a folder at or under it. */
function surveyFolderOf(folder: string, surveysRoot: string): string | undefined {
  const [id] = relative(surveysRoot, folder).split(sep);
  return id && id !== '..' && !isAbsolute(id) ? join(surveysRoot, id) : undefined;
}

/** The folders under `dir` that hold no file, deepest first (each rmdir fails, harmlessly, if one does). */
async function removeEmptyFolders(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.isDirectory()) {
      const path = join(dir, entry.name);
      await removeEmptyFolders(path);
      await rmdir(path).catch(() => undefined);
    }
  }
}

async function removeEmptyUpTo(folder: string, stop: string): Promise<void> {
  for (let dir = folder; dir.startsWith(`${stop}${sep}`); dir = dirname(dir)) {
    try {
      await rmdir(dir);
    } catch (error) {
      // Gone already (removed with the empty folders beside it): on to its parent.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return;
    }
  }
}
