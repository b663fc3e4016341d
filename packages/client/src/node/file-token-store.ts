/**
 * Transaction tokens in a JSON file (mode 0600: a token authorises billed imagery), so a later
 * run of the CLI (a resumed download, another format of the same area) reuses the token for its
 * 30 days instead of starting a new billed transaction. Written to a temporary file and renamed,
 * so a killed process leaves the old file or the new one, never half of one.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { StoredToken, TokenStore } from '../token-store.js';

interface TokenFile {
  version: 1;
  tokens: Record<string, StoredToken>;
}

function isStoredToken(value: unknown): value is StoredToken {
  const token = value as StoredToken;
  return typeof token?.token === 'string' && typeof token.radius === 'number' && typeof token.expiresAt === 'number';
}

export class FileTokenStore implements TokenStore {
  constructor(readonly path: string) {
    if (typeof path !== 'string' || path === '') throw new TypeError('FileTokenStore needs a file path');
  }

  async #read(): Promise<Record<string, StoredToken>> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    let parsed: TokenFile;
    try {
      parsed = JSON.parse(text) as TokenFile;
    } catch {
      throw new Error(`${this.path} is not a token file (not JSON); move it away to start afresh`);
    }
    if (parsed?.version !== 1 || typeof parsed.tokens !== 'object' || parsed.tokens === null) {
      throw new Error(`${this.path} is not a version 1 token file`);
    }
    return Object.fromEntries(Object.entries(parsed.tokens).filter(([, token]) => isStoredToken(token)));
  }

  async #write(tokens: Record<string, StoredToken>): Promise<void> {
    // The last token gone, the file goes too: no empty token file left in a download folder.
    if (Object.keys(tokens).length === 0) {
      await rm(this.path, { force: true });
      return;
    }
    // A user's token file may be the first thing in its folder (~/.local/state/nadir-client).
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const file: TokenFile = { version: 1, tokens };
    const temporary = `${this.path}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, this.path);
  }

  async get(scope: string): Promise<StoredToken | undefined> {
    return (await this.#read())[scope];
  }

  async set(scope: string, token: StoredToken): Promise<void> {
    const tokens = await this.#read();
    tokens[scope] = token;
    await this.#write(tokens);
  }

  async delete(scope: string): Promise<void> {
    const tokens = await this.#read();
    if (!(scope in tokens)) return;
    delete tokens[scope];
    await this.#write(tokens);
  }
}
