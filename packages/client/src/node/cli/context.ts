import { NadirClient, type NadirClientOptions } from '../../client.js';
import type { TokenStore } from '../../token-store.js';
import type { Clock, Sleep } from '../../waiting.js';
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

export function printJson(context: CliContext, value: unknown): void {
  context.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * The progress board of a command with --progress: shown when asked for or on a terminal, started
 * once the count is known, with the client's retry waits noted on it.
 */
export class CommandProgress {
  board: ProgressBoard | undefined;
  readonly shown: boolean;

  constructor(
    private readonly context: CliContext,
    asked: boolean | undefined,
  ) {
    this.shown = asked === true || context.stderr.isTTY === true;
  }

  /** A new board for `count` items, when progress is shown. */
  start(count: number, unit?: string): void {
    if (this.shown) this.board = new ProgressBoard(this.context.stderr, count, this.context.clock, unit);
  }

  readonly onRetryWait: NonNullable<NadirClientOptions['onRetryWait']> = (wait) =>
    this.board?.note(`waiting ${(wait.ms / 1000).toFixed(1)} s (${wait.why})`);
}
