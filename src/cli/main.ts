import { createServices, type Services, systemClock } from '../composition.js';
import { type Config, parseConfig } from '../config/config.js';
import { isNadirError, oneLine } from '../errors.js';
import { packageVersion } from '../version.js';
import { type CliContext, type Command, UsageError } from './command.js';
import { accountsCommand } from './commands/accounts.js';
import { demoCommand } from './commands/demo.js';
import { ingestCommand } from './commands/ingest.js';
import { migrateCommand } from './commands/migrate.js';
import { serveCommand } from './commands/serve.js';
import { storageCommand } from './commands/storage.js';
import { surveysCommand } from './commands/surveys.js';
import { workerCommand } from './commands/worker.js';

const COMMANDS: Command[] = [
  serveCommand,
  migrateCommand,
  ingestCommand,
  demoCommand,
  surveysCommand,
  accountsCommand,
  storageCommand,
  workerCommand,
];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `nadir: aerial imagery service\n\nUsage: nadir <command> [options]   (nadir <command> --help)\n\nCommands:\n${lines.join('\n')}\n`;
}

/** Where a CLI invocation writes and how it builds the services (tests give their own). */
export interface CliIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  openServices: (config: Config) => Promise<Services>;
}

const PROCESS_IO: CliIo = {
  stdout: process.stdout,
  stderr: process.stderr,
  openServices: (config) => createServices(config, systemClock),
};

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
    out.write(overview());
    return name ? 0 : 2;
  }
  if (name === '--version') {
    out.write(`${packageVersion()}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    err.write(`nadir: unknown command ${shown(JSON.stringify(name))} (try nadir --help)\n`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    out.write(`${command.summary}\n\nUsage: ${command.usage}\n`);
    return 0;
  }
  let services: Promise<Services> | undefined;
  try {
    const config = parseConfig(env, process.cwd());
    const ctx: CliContext = {
      config,
      services: () => {
        services ??= io.openServices(config);
        return services;
      },
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
    err.write(`nadir ${name}: ${shown(message)}\n`);
    if (env.NADIR_DEBUG && error instanceof Error) err.write(`${error.stack}\n`);
    return 1;
  } finally {
    await (await services?.catch(() => undefined))?.close();
  }
}
