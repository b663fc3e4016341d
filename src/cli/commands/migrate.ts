import { withoutCredentials } from '../../config/config.js';
import { openStores } from '../../stores/open-stores.js';
import { type CliContext, type Command, parseCommandArgs, printJson } from '../command.js';
import { systemClock } from '../system-clock.js';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Bring the database schema up to date (NADIR_DATABASE: SQLite file or postgres:// URL)',
  usage: `nadir migrate [--json]

Applies the schema migrations the database has not seen, each store's in order, under a lock
(PostgreSQL: an advisory lock), so it is safe while servers start. Every command, \`serve\`
included, does the same at start; run it on its own to migrate before a rolling restart.
A database migrated by a newer nadir is refused and left alone.`,
  async run(args: string[], ctx: CliContext) {
    const { values } = parseCommandArgs(args, { json: { type: 'boolean' } }, false);
    const { database } = ctx.config;
    const stores = await openStores(database, systemClock);
    await stores.close();
    const where = database.engine === 'sqlite' ? database.path : withoutCredentials(database.url);
    if (values.json) printJson(ctx, { engine: database.engine, database: where, schema: stores.schema });
    else {
      const versions = Object.entries(stores.schema).map(([store, version]) => `${store} ${version}`);
      ctx.stdout.write(`${database.engine} ${where}: schema up to date (${versions.join(', ')})\n`);
    }
    return 0;
  },
};
