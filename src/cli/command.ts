import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { Services, SurveyWriter } from '../composition.js';
import type { Config } from '../config/config.js';
import type { Stores } from '../stores/open-stores.js';

/**
 * Each part is built on first use, so `--help` and argument errors open nothing, and a command
 * opens only what it uses: an accounts command the database, never Redis or the survey files.
 */
export interface CliContext {
  config: Config;
  /** The catalogue and the accounts (`accounts`, `surveys list|show`). */
  stores(): Promise<Pick<Stores, 'catalogue' | 'accounts'>>;
  /** The stores, the survey files and the ingestor (`ingest`, `worker`, `demo`, `surveys delete`, `storage`). */
  surveyWriter(): Promise<Omit<SurveyWriter, 'close'>>;
  /** Everything a server runs on (`serve`). */
  services(): Promise<Services>;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(args: string[], ctx: CliContext): Promise<number>;
}

/** A mistake in how a command was called: printed with a hint, exit code 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * node:util parseArgs with usage errors instead of TypeErrors. Some of its messages are sentences
 * on separate lines ("... is ambiguous.\nDid you forget ..."): joined into one; a line break
 * inside an argument stays one, for main to show as an escape.
 */
export function parseCommandArgs<O extends Options>(args: string[], options: O, allowPositionals = true) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/([.?])\n(?=[A-Z])/g, '$1 '));
  }
}

export function printJson(ctx: CliContext, value: unknown): void {
  ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * A whole-number option: plain decimal digits (no sign, spaces, exponent or hexadecimal, which
 * Number() would take), within min..max, else a usage error naming it.
 */
export function wholeNumber(option: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${option} must be a whole number ${range}, got ${JSON.stringify(text)}`);
  }
  return value;
}
