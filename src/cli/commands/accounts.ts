import { keyIdOfApiKey } from '../../accounts/api-key.js';
import type { Account, AccountStore, ApiKeyInfo } from '../../accounts/index.js';
import { NadirError } from '../../errors.js';
import { type CliContext, type Command, parseCommandArgs, printJson, UsageError } from '../command.js';

/**
 * `nadir accounts ...`: the operator's side of accounts (decisions.md "Accounts"). Every
 * subcommand has `--json` for scripts; human output is one fact per line.
 */

const USAGE = `nadir accounts create --name NAME [--raster] [--allowance N] [--rate-limit N] [--interval S] [--json]
nadir accounts list [--json]
nadir accounts show <account> [--json]
nadir accounts issue-key <account> [--json]
nadir accounts keys <account> [--json]
nadir accounts revoke-key <key id, prefix or key> [--json]
nadir accounts subscription <account> on|off [--json]
nadir accounts allowance <account> N [--json]
nadir accounts rate-limit <account> N [--interval S] [--json]
nadir accounts enable|disable <account> [--json]
nadir accounts usage <account> [--json]

<account> is an account id or name, given first or as --account <account>.
create prints the new account's first API key; keys are shown once and stored only as a hash.
Allowance: raster transactions per calendar month (UTC). Rate limit: tile requests per key per
--interval seconds (default 60). Exit codes: 0 done, 1 refused (e.g. unknown account), 2 usage.`;

const OPTIONS = {
  json: { type: 'boolean' },
  account: { type: 'string' },
  name: { type: 'string' },
  raster: { type: 'boolean' },
  allowance: { type: 'string' },
  'rate-limit': { type: 'string' },
  interval: { type: 'string' },
} as const;

type OptionName = keyof typeof OPTIONS;
type Values = { [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

interface Invocation {
  ctx: CliContext;
  accounts: AccountStore;
  values: Values;
  /** Positionals after the subcommand (and after the account, for account subcommands). */
  args: string[];
  account: () => Promise<Account>;
}

interface Subcommand {
  /** Options it takes besides --json (and --account when `needsAccount`). */
  options: OptionName[];
  needsAccount: boolean;
  /** How many positionals follow the account. */
  arity: number;
  run(call: Invocation): Promise<void>;
}

function count(option: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) < min) {
    throw new UsageError(`${option} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** Ids are UUIDs, names are free text: try the id first, then the name (case-insensitive). */
async function resolveAccount(accounts: AccountStore, reference: string): Promise<Account> {
  const found = (await accounts.getAccount(reference)) ?? (await accounts.getAccountByName(reference));
  if (!found) throw new NadirError('ACCOUNT_NOT_FOUND', `No account with id or name ${JSON.stringify(reference)}`);
  return found;
}

function describeAccount(account: Account): string {
  return [
    `${account.name}  (id ${account.id})${account.disabled ? '  DISABLED' : ''}`,
    `  raster subscription: ${account.rasterSubscription ? 'on' : 'off'}`,
    `  monthly allowance:   ${account.monthlyAllowance} transactions`,
    `  tile rate limit:     ${account.tileRateLimit} per ${account.tileRateInterval} s`,
    `  created:             ${account.createdAt}`,
  ].join('\n');
}

function describeKey(key: ApiKeyInfo): string {
  return `${key.prefix}  created ${key.createdAt}  ${key.revoked ? `revoked ${key.revokedAt}` : 'active'}`;
}

function output(call: Invocation, json: unknown, human: string): void {
  if (call.values.json) printJson(call.ctx, json);
  else call.ctx.stdout.write(`${human}\n`);
}

/** Subcommands that change one setting print the account as it is afterwards. */
function accountChange(arity: number, options: OptionName[], change: (call: Invocation) => Promise<Account>) {
  return {
    options,
    needsAccount: true,
    arity,
    async run(call: Invocation) {
      const account = await change(call);
      output(call, account, describeAccount(account));
    },
  } satisfies Subcommand;
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  create: {
    options: ['name', 'raster', 'allowance', 'rate-limit', 'interval'],
    needsAccount: false,
    arity: 0,
    async run(call) {
      const { values, accounts } = call;
      if (values.name === undefined) throw new UsageError('create needs --name NAME');
      const account = await accounts.createAccount({
        name: values.name,
        rasterSubscription: values.raster ?? false,
        monthlyAllowance: count('--allowance', values.allowance, 0),
        tileRateLimit: count('--rate-limit', values['rate-limit'], 1),
        tileRateInterval: count('--interval', values.interval, 1),
      });
      const key = await accounts.issueApiKey(account.id);
      output(
        call,
        { accountId: account.id, apiKey: key.key },
        `${describeAccount(account)}\nAPI key (shown once; it cannot be recovered): ${key.key}`,
      );
    },
  },
  list: {
    options: [],
    needsAccount: false,
    arity: 0,
    async run(call) {
      const accounts = await call.accounts.listAccounts();
      output(call, { accounts }, accounts.length ? accounts.map(describeAccount).join('\n') : 'No accounts.');
    },
  },
  show: {
    options: [],
    needsAccount: true,
    arity: 0,
    async run(call) {
      const account = await call.account();
      const keys = await call.accounts.listApiKeys(account.id);
      output(
        call,
        { account, keys },
        [describeAccount(account), ...keys.map((k) => `  key ${describeKey(k)}`)].join('\n'),
      );
    },
  },
  'issue-key': {
    options: [],
    needsAccount: true,
    arity: 0,
    async run(call) {
      const account = await call.account();
      const key = await call.accounts.issueApiKey(account.id);
      output(
        call,
        { accountId: account.id, apiKey: key.key, keyId: key.id, prefix: key.prefix },
        `API key for ${account.name} (shown once; it cannot be recovered): ${key.key}`,
      );
    },
  },
  keys: {
    options: [],
    needsAccount: true,
    arity: 0,
    async run(call) {
      const account = await call.account();
      const keys = await call.accounts.listApiKeys(account.id);
      output(call, { accountId: account.id, keys }, keys.length ? keys.map(describeKey).join('\n') : 'No keys.');
    },
  },
  'revoke-key': {
    options: [],
    needsAccount: false,
    arity: 1,
    async run(call) {
      const [reference = ''] = call.args;
      // A whole key pasted from a leak report works too: its id is inside it.
      const key = await call.accounts.revokeApiKey(keyIdOfApiKey(reference) ?? reference);
      output(call, key, `Revoked ${describeKey(key)}`);
    },
  },
  subscription: accountChange(1, [], async (call) => {
    const [state] = call.args;
    if (state !== 'on' && state !== 'off') throw new UsageError('subscription takes on or off');
    return call.accounts.setRasterSubscription((await call.account()).id, state === 'on');
  }),
  allowance: accountChange(1, [], async (call) => {
    const allowance = count('allowance', call.args[0], 0) as number;
    return call.accounts.setMonthlyAllowance((await call.account()).id, allowance);
  }),
  'rate-limit': accountChange(1, ['interval'], async (call) => {
    // Both numbers before the account: a usage error is one whether or not the account exists.
    const limit = count('rate limit', call.args[0], 1) as number;
    const interval = count('--interval', call.values.interval, 1);
    const account = await call.account();
    return call.accounts.setTileRateLimit(account.id, limit, interval ?? account.tileRateInterval);
  }),
  enable: accountChange(0, [], async (call) => call.accounts.setDisabled((await call.account()).id, false)),
  disable: accountChange(0, [], async (call) => call.accounts.setDisabled((await call.account()).id, true)),
  usage: {
    options: [],
    needsAccount: true,
    arity: 0,
    async run(call) {
      const account = await call.account();
      const usage = await call.accounts.usage(account.id);
      const lines = usage.months.map((m) => `${m.month}  ${m.transactions} transactions  ${m.tiles} tiles`);
      output(call, usage, lines.length ? lines.join('\n') : `No usage yet for ${account.name}.`);
    },
  },
};

export const accountsCommand: Command = {
  name: 'accounts',
  summary: 'Manage accounts, API keys, subscriptions, allowances and rate limits; print usage',
  usage: USAGE,
  async run(argv: string[], ctx: CliContext) {
    const { values, positionals } = parseCommandArgs(argv, OPTIONS);
    const [name, ...rest] = positionals;
    const subcommand = name === undefined ? undefined : SUBCOMMANDS[name];
    if (!name || !subcommand || !Object.hasOwn(SUBCOMMANDS, name)) {
      throw new UsageError(`expected one of ${Object.keys(SUBCOMMANDS).join(', ')}`);
    }
    const allowed = new Set<string>(['json', ...subcommand.options, ...(subcommand.needsAccount ? ['account'] : [])]);
    const stray = Object.keys(values).find((option) => !allowed.has(option));
    if (stray) throw new UsageError(`${name} does not take --${stray}`);
    const reference = subcommand.needsAccount ? (values.account ?? rest.shift()) : undefined;
    if (subcommand.needsAccount && !reference) throw new UsageError(`${name} needs an account id or name`);
    if (rest.length !== subcommand.arity) {
      const where = subcommand.needsAccount ? ' after the account' : '';
      throw new UsageError(`${name} takes ${subcommand.arity} argument(s)${where}, got ${rest.length}`);
    }
    const { accounts } = await ctx.stores();
    await subcommand.run({
      ctx,
      accounts,
      values: values as Values,
      args: rest,
      account: () => resolveAccount(accounts, reference ?? ''),
    });
    return 0;
  },
};
