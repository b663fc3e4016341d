/**
 * The suite-wide check that no test server logged a secret (issue 18 item 6: "checked by a test
 * that greps the logs of a full test run"); what counts as one is secret-pieces.ts's rule.
 * `node --test` runs every test file in a process of its own, and Node 20
 * has no global teardown, so there is no moment at which one process could read the logs of a
 * whole run. Instead every process checks its own: the support helpers that start servers
 * (test/api/helpers.ts startApi, fixtures.ts servicesFor, nadir-process.ts) hand every log line
 * they capture to `watchLogLine`, and note every key and token issued in the process (the services'
 * issueApiKey and the token codec's issue are wrapped; keys printed by `nadir` commands and the
 * demo town's key are noted from their output). A root-level `after` hook, registered once when
 * this module is first imported, fails the file if any line holds a piece of a noted secret, or
 * anything shaped like a whole key or token (for secrets issued where the process could not see
 * them, e.g. tokens of a spawned `nadir serve`). Every file of a run is checked this way, so a
 * full `npm test` greps every log line of every server it started; a single file run alone gets
 * the same check. Each file's data folders and account stores are its own, so a secret is issued
 * in the process whose servers see it (the shared demo town's key is noted by demoTown()).
 */
import { after } from 'node:test';
import { SecretPieces, secretShapesIn, wholeSecretsIn } from './secret-pieces.js';

/** Secrets issued and lines written, and which lines hold a secret. */
export class SecretWatch {
  readonly #issued = new SecretPieces();
  readonly #lines: { source: string; line: string }[] = [];

  noteSecret(secret: string): void {
    this.#issued.add(secret, secret.startsWith('t1.') ? 'token' : 'key');
  }

  watchLine(line: string, source: string): void {
    this.#lines.push({ source, line });
  }

  /** `source: what ... in line` for every line holding a piece of a noted secret or a secret's shape. */
  leaks(): string[] {
    const leaks: string[] = [];
    for (const { source, line } of this.#lines) {
      const found = [...this.#issued.findIn(line), ...secretShapesIn(line)];
      if (found.length > 0) leaks.push(`${source}: ${found.join(', ')} in ${line.slice(0, 300)}`);
    }
    return leaks;
  }

  get counts(): { lines: number; pieces: number } {
    return { lines: this.#lines.length, pieces: this.#issued.size };
  }
}

/** This test process's watch. */
export const processWatch = new SecretWatch();

/** A key or token issued in this process (by a service, or printed by a command it ran). */
export function noteSecret(secret: string): void {
  processWatch.noteSecret(secret);
}

/** Every whole key or token in some output (a command's stdout, a response body), noted. */
export function noteSecretsIn(text: string): void {
  for (const secret of wholeSecretsIn(text)) noteSecret(secret);
}

/** One line a server wrote (its JSON log, or a spawned process's output). */
export function watchLogLine(line: string, source = 'server'): void {
  processWatch.watchLine(line, source);
}

/** A log destination that keeps lines for the caller and gives them to the watch. */
export function watchedLogStream(keep?: string[], source = 'server'): { write(line: string): void } {
  return {
    write(line) {
      keep?.push(line);
      watchLogLine(line, source);
    },
  };
}

/** Wraps `issueApiKey` and `tokens.issue` of some services so the secrets they issue are noted. */
export function watchIssuedSecrets<
  S extends {
    accounts: { issueApiKey(accountId: string): Promise<{ key: string }> };
    tokens: { issue(...args: never[]): { token: string } };
  },
>(services: S): S {
  const accounts = services.accounts;
  const issueApiKey = accounts.issueApiKey.bind(accounts);
  accounts.issueApiKey = async (accountId: string) => {
    const issuedKey = await issueApiKey(accountId);
    noteSecret(issuedKey.key);
    return issuedKey;
  };
  const tokens = services.tokens as { issue(...args: unknown[]): { token: string } };
  const issue = tokens.issue.bind(tokens);
  tokens.issue = (...args: unknown[]) => {
    const issuedToken = issue(...args);
    noteSecret(issuedToken.token);
    return issuedToken;
  };
  return services;
}

// Registered once, at the root of whichever test file first imports this module: it runs after
// every test and hook of that file.
after(() => {
  const leaks = processWatch.leaks();
  if (leaks.length > 0) {
    throw new Error(`secrets in ${leaks.length} log line(s) of this test file:\n${leaks.slice(0, 20).join('\n')}`);
  }
});
