import { join } from 'node:path';
import { NadirClient, type NadirClientOptions } from '../../client.js';
import { HeldTokenStore, type TokenStore } from '../../token-store.js';
import type { Clock, Sleep } from '../../waiting.js';
import { FileTokenStore } from '../file-token-store.js';
import type { ServerSettings } from './arguments.js';
import { ProgressBoard, type ProgressSink } from './progress-board.js';

/** What one run of the command line works with; main builds it from the process, tests give their own. */
export interface CliContext {
  env: Record<string, string | undefined>;
  stdout: { write(text: string): unknown };
  stderr: ProgressSink;
  clock: Clock;
  sleep: Sleep;
  fetch: typeof fetch;
  /** Ends every wait and transfer (SIGINT in the real command). */
  signal: AbortSignal;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(args: string[], context: CliContext): Promise<number>;
}

export function clientFor(
  settings: ServerSettings,
  context: CliContext,
  extra: { tokenStore?: TokenStore; onRetryWait?: NadirClientOptions['onRetryWait'] } = {},
): NadirClient {
  return new NadirClient({
    ...settings,
    fetch: context.fetch,
    clock: context.clock,
    sleep: context.sleep,
    ...extra,
  });
}

/**
 * The user's token file, shared by every command and folder: NADIR_TOKEN_FILE, else
 * `$XDG_STATE_HOME/nadir-client/tokens.json`, else `~/.local/state/nadir-client/tokens.json`;
 * none without a home (NADIR_TOKEN_FILE= empty turns it off). It is what lets a second `change`
 * or a download into another folder of the same AOI reuse the token instead of buying another.
 */
export function userTokenFile(env: Record<string, string | undefined>): string | undefined {
  if (env.NADIR_TOKEN_FILE !== undefined) return env.NADIR_TOKEN_FILE || undefined;
  const state = env.XDG_STATE_HOME || (env.HOME ? join(env.HOME, '.local', 'state') : undefined);
  return state ? join(state, 'nadir-client', 'tokens.json') : undefined;
}

/**
 * The tokens of a command that fetches imagery: the folder's own file first (a download folder's
 * `.nadir-tokens.json`), then the user's; held back until the command commits, so a run that
 * finds nothing to fetch writes no token anywhere.
 */
export function commandTokens(context: CliContext, folderFile?: string): HeldTokenStore {
  const files = [folderFile, userTokenFile(context.env)].filter((file) => file !== undefined);
  return new HeldTokenStore(files.map((file) => new FileTokenStore(file)));
}

export function printJson(context: CliContext, value: unknown): void {
  context.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * The progress board of a command with --progress: shown when asked for or on a terminal (never
 * when `quiet`), started once the count is known, with the client's retry waits noted on it.
 */
export class CommandProgress {
  board: ProgressBoard | undefined;
  readonly shown: boolean;

  constructor(
    private readonly context: CliContext,
    asked: boolean | undefined,
    quiet = false,
  ) {
    this.shown = !quiet && (asked === true || context.stderr.isTTY === true);
  }

  /** A new board for `count` items, when progress is shown. */
  start(count: number, unit?: string): void {
    if (this.shown) this.board = new ProgressBoard(this.context.stderr, count, this.context.clock, unit);
  }

  /** A retry's wait, shown for as long as it lasts (it said "waiting 19.0 s" long after the wait). */
  readonly onRetryWait: NonNullable<NadirClientOptions['onRetryWait']> = (wait) =>
    this.board?.note(`waiting ${(wait.ms / 1000).toFixed(1)} s (${wait.why})`, wait.ms);
}
