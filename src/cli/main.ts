import type { Services, SurveyWriter } from '../composition.js';
import { type Config, parseConfig } from '../config/config.js';
import { isNadirError, oneLine } from '../errors.js';
import type { Stores } from '../stores/open-stores.js';
import { packageVersion } from '../version.js';
import { type CliContext, type Command, UsageError } from './command.js';
import { systemClock } from './system-clock.js';

/**
 * Each command's module is loaded when it runs: `serve`'s imports (fastify, GDAL, sharp) take
 * about a second that `nadir accounts list` need not wait for. In the order `--help` lists them.
 */
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  serve: async () => (await import('./commands/serve.js')).serveCommand,
  migrate: async () => (await import('./commands/migrate.js')).migrateCommand,
  ingest: async () => (await import('./commands/ingest.js')).ingestCommand,
  demo: async () => (await import('./commands/demo.js')).demoCommand,
  surveys: async () => (await import('./commands/surveys.js')).surveysCommand,
  accounts: async () => (await import('./commands/accounts.js')).accountsCommand,
  storage: async () => (await import('./commands/storage.js')).storageCommand,
  worker: async () => (await import('./commands/worker.js')).workerCommand,
};

async function overview(): Promise<string> {
  const commands = await Promise.all(Object.values(COMMANDS).map((load) => load()));
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `nadir: aerial imagery service\n\nUsage: nadir <command> [options]   (nadir <command> --help)\n\nCommands:\n${lines.join('\n')}\n`;
}

/** Where a CLI invocation writes and how it builds what commands use (tests give their own). */
export interface CliIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  openServices: (config: Config) => Promise<Services>;
  /** The narrower parts; where not given (tests), they are the services' own. */
  openStores?: (config: Config) => Promise<Stores>;
  openSurveyWriter?: (config: Config) => Promise<SurveyWriter>;
}

/**
 * Each part's modules are loaded when a command first asks for it: the composition root imports
 * GDAL, sharp, the AWS SDK, Redis and fastify (about a second at start), which an accounts
 * command on SQLite does not need.
 */
const PROCESS_IO: CliIo = {
  stdout: process.stdout,
  stderr: process.stderr,
  openServices: async (config) => (await import('../composition.js')).createServices(config, systemClock),
  openStores: async (config) => (await import('../stores/open-stores.js')).openStores(config.database, systemClock),
  openSurveyWriter: async (config) => (await import('../composition.js')).openSurveyWriter(config, systemClock),
};

interface Closable {
  close(): Promise<void>;
}

/** The longest message printed whole; a longer one (an 8 KB argument echoed, say) is cut in the middle. */
const MAX_MESSAGE = 1000;

/** A message as printed: one line (errors.ts oneLine), at most MAX_MESSAGE characters. */
function shown(message: string): string {
  const line = oneLine(message);
  if (line.length <= MAX_MESSAGE) return line;
  const half = MAX_MESSAGE / 2 - 10;
  return `${line.slice(0, half)} ...(${line.length - 2 * half} characters)... ${line.slice(-half)}`;
}

/** Runs one CLI invocation; returns the exit code. Never throws. */
export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  io: CliIo = PROCESS_IO,
): Promise<number> {
  const [name, ...args] = argv;
  const out = io.stdout;
  const err = io.stderr;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    out.write(await overview());
    return name ? 0 : 2;
  }
  if (name === '--version') {
    out.write(`${packageVersion()}\n`);
    return 0;
  }
  let command: Command | undefined;
  try {
    command = Object.hasOwn(COMMANDS, name) ? await COMMANDS[name]?.() : undefined;
  } catch (error) {
    // A module that cannot load (a broken build): one line, as any other failure.
    err.write(`nadir ${name}: ${shown(error instanceof Error ? error.message : String(error))}\n`);
    return 1;
  }
  if (!command) {
    err.write(`nadir: unknown command ${shown(JSON.stringify(name))} (try nadir --help)\n`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    out.write(`${command.summary}\n\nUsage: ${command.usage}\n`);
    return 0;
  }
  const opened: Promise<Closable>[] = [];
  /** A part opened once, on first use, and closed when the command ends. */
  function onFirstUse<T extends Closable>(open: () => Promise<T>): () => Promise<T> {
    let part: Promise<T> | undefined;
    return () => {
      if (!part) {
        part = open();
        opened.push(part);
      }
      return part;
    };
  }
  try {
    const config = parseConfig(env, process.cwd());
    const services = onFirstUse(() => io.openServices(config));
    const { openStores, openSurveyWriter } = io;
    const ctx: CliContext = {
      config,
      services,
      stores: openStores ? onFirstUse(() => openStores(config)) : services,
      surveyWriter: openSurveyWriter ? onFirstUse(() => openSurveyWriter(config)) : services,
      stdout: out,
      stderr: err,
    };
    return await command.run(args, ctx);
  } catch (error) {
    if (error instanceof UsageError) {
      err.write(`nadir ${name}: ${shown(error.message)} (see nadir ${name} --help)\n`);
      return 2;
    }
    const message = isNadirError(error) || error instanceof Error ? error.message : String(error);
    // Never `nadir ingest: ` and nothing: a library error without a message still says what it is.
    const said =
      message.trim() !== '' ? message : `${error instanceof Error ? error.name : typeof error} without a message`;
    err.write(`nadir ${name}: ${shown(said)}\n`);
    if (env.NADIR_DEBUG && error instanceof Error) err.write(`${error.stack}\n`);
    return 1;
  } finally {
    for (const part of opened) await (await part.catch(() => undefined))?.close();
  }
}
