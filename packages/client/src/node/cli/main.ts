/**
 * The nadir-client command: `coverage`, `download`, `change`, `tiles export`, `stac search`. Conventions as the `nadir`
 * command's (src/cli/main.ts): `--json` where a script reads the output, errors as one line on
 * stderr with exit code 1, a mistake in how the command was called exit code 2.
 */
import { NadirApiError } from '../../errors.js';
import { CliUsageError } from './arguments.js';
import { changeCommand } from './change-command.js';
import type { CliContext, Command } from './context.js';
import { coverageCommand } from './coverage-command.js';
import { downloadCommand } from './download-command.js';
import { stacCommand } from './stac-command.js';
import { tilesCommand } from './tiles-command.js';

const COMMANDS: Command[] = [coverageCommand, downloadCommand, changeCommand, tilesCommand, stacCommand];

const SERVER_HELP = `Server and key: --url URL --key KEY, or NADIR_URL and NADIR_API_KEY.`;

function overview(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  const lines = COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return `nadir-client: coverage, downloads, change figures, tile exports and catalogue search from a nadir server\n\nUsage: nadir-client <command> [options]   (nadir-client <command> --help)\n\nCommands:\n${lines.join('\n')}\n\n${SERVER_HELP}\n`;
}

/** One line, at most 1000 characters: an error message as printed. */
function oneLine(text: string): string {
  const line = text.replace(/\s*[\r\n]+\s*/g, ' ');
  return line.length <= 1000 ? line : `${line.slice(0, 997)}...`;
}

/** Runs one invocation; returns the exit code. Never throws. */
export async function main(argv: string[], context: CliContext): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    context.stdout.write(overview());
    return name ? 0 : 2;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) {
    context.stderr.write(`nadir-client: unknown command ${oneLine(JSON.stringify(name))} (try nadir-client --help)\n`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    context.stdout.write(`${command.summary}\n\nUsage: ${command.usage}\n\n${SERVER_HELP}\n`);
    return 0;
  }
  try {
    return await command.run(args, context);
  } catch (error) {
    if (error instanceof CliUsageError) {
      context.stderr.write(`nadir-client ${name}: ${oneLine(error.message)} (see nadir-client ${name} --help)\n`);
      return 2;
    }
    const message =
      error instanceof NadirApiError
        ? `${error.message} (${error.status} ${error.code}${error.reason ? `, ${error.reason}` : ''})`
        : error instanceof Error
          ? error.message
          : String(error);
    context.stderr.write(`nadir-client ${name}: ${oneLine(message)}\n`);
    if (context.env.NADIR_DEBUG && error instanceof Error) context.stderr.write(`${error.stack}\n`);
    return 1;
  }
}
