import { buildServer } from '../../api/server.js';
import { type CliContext, type Command, parseCommandArgs } from '../command.js';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the HTTP service (NADIR_HOST, NADIR_PORT, NADIR_DATA_DIR, NADIR_DATABASE)',
  usage: `nadir serve [--port N] [--host H]

Environment: NADIR_PORT (8080), NADIR_HOST (0.0.0.0), NADIR_DATA_DIR (./data),
NADIR_DATABASE (<data>/nadir.sqlite), NADIR_LOG_LEVEL (info), NADIR_TOKEN_SECRETS.
SIGTERM/SIGINT: stop accepting connections, finish requests in flight, then exit.`,
  async run(args: string[], ctx: CliContext) {
    const { values } = parseCommandArgs(args, { port: { type: 'string' }, host: { type: 'string' } }, false);
    const services = ctx.services();
    const port = values.port === undefined ? ctx.config.port : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`--port must be 0..65535, got ${values.port}`);
    const app = await buildServer(services);
    const address = await app.listen({ port, host: values.host ?? ctx.config.host });
    ctx.stderr.write(`nadir listening on ${address}\n`);
    await new Promise<void>((resolve) => {
      const stop = async () => {
        await app.close();
        resolve();
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
    return 0;
  },
};
