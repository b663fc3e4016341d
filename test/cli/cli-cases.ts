/**
 * Generated `nadir` command lines for the CLI's property-based tests (properties.test.ts), each
 * with what the usage texts and README promise for it: exit 0 for help, 2 for a mistake in how
 * the command was called (one line naming it, pointing at --help), and for a well-formed call
 * 0 or 1 (done, or refused with one line). A case is a well-formed call, that call with exactly
 * one mistake, or a run of hostile tokens (held only to the one-line rule).
 *
 * The commands' options are written out here from their usage texts (src/cli/commands/*.ts), not
 * imported: the test is a second reading of them.
 */
import fc from 'fast-check';
import { hostileText } from '../support/hostile-input.js';

export type Outcome = 'help' | 'usage' | 'accepted' | 'any';

export interface CliCase {
  argv: string[];
  outcome: Outcome;
  /** What the case is, for the failure message. */
  what: string;
}

/** A string option's values: the ones the command takes, and ones it must refuse. */
interface StringOption {
  valid: fc.Arbitrary<string>;
  invalid?: fc.Arbitrary<string>;
}

interface CommandSpec {
  booleans: string[];
  strings: Record<string, StringOption>;
  /** Well-formed positionals (subcommand and its arguments). */
  positionals: fc.Arbitrary<{ args: readonly string[]; options?: readonly string[] }>;
  /** Positionals that are a mistake (missing, extra, unknown subcommand). */
  badPositionals: fc.Arbitrary<readonly string[]>;
}

const digits = (min: number, max: number) => fc.integer({ min, max }).map(String);
/** Numbers the commands must refuse whatever their range: not plain decimal digits, or too big. */
const NOT_COUNTS = [
  '',
  ' 1',
  '1 ',
  '1.5',
  '1e3',
  '0x10',
  '+1',
  '١',
  '９',
  'Infinity',
  'NaN',
  '1_000',
  '99999999999999999999',
  'one',
];
const notCount = (...more: string[]) => fc.constantFrom(...NOT_COUNTS, ...more);

/** A value that parseArgs takes as a separate argument: it must not start with a dash. */
const word = fc.oneof(
  fc.constantFrom('acme', 'Acme Corp', 'ÆØÅ', 'a', '1', 'x'.repeat(300)),
  hostileText().filter((t) => t !== '' && !t.startsWith('-')),
);
const UUID = fc.uuid();
/** Manifest paths ingest may be given: none of them ingests (each fails before writing). */
export const MANIFEST_NAMES = ['missing.json', 'not-json.json', 'bad-date.json', 'missing-source.json', 'dir'];

const ACCOUNT_SUBCOMMANDS: Record<string, { options: string[]; account: boolean; args: fc.Arbitrary<string[]> }> = {
  create: { options: ['name', 'raster', 'allowance', 'rate-limit', 'interval'], account: false, args: fc.constant([]) },
  list: { options: [], account: false, args: fc.constant([]) },
  show: { options: [], account: true, args: fc.constant([]) },
  'issue-key': { options: [], account: true, args: fc.constant([]) },
  keys: { options: [], account: true, args: fc.constant([]) },
  'revoke-key': { options: [], account: false, args: word.map((k) => [k]) },
  subscription: { options: [], account: true, args: fc.constantFrom('on', 'off').map((s) => [s]) },
  allowance: { options: [], account: true, args: digits(0, 1_000_000).map((n) => [n]) },
  'rate-limit': { options: ['interval'], account: true, args: digits(1, 100_000).map((n) => [n]) },
  enable: { options: [], account: true, args: fc.constant([]) },
  disable: { options: [], account: true, args: fc.constant([]) },
  usage: { options: [], account: true, args: fc.constant([]) },
};

/** The account option and positional values accounts subcommands take. */
const ACCOUNT_STRINGS: Record<string, StringOption> = {
  account: { valid: word },
  name: { valid: word },
  allowance: { valid: digits(0, 1_000_000), invalid: notCount('-1') },
  'rate-limit': { valid: digits(1, 100_000), invalid: notCount('0', '-1') },
  interval: { valid: digits(1, 86_400), invalid: notCount('0', '-1') },
};

export const COMMANDS: Record<string, CommandSpec> = {
  serve: {
    booleans: [],
    strings: {
      port: { valid: digits(0, 65535), invalid: notCount('65536', '-1', '80.0') },
      host: { valid: fc.constantFrom('127.0.0.1', 'localhost', '::1', 'example.invalid') },
      // More than one worker starts processes: only `1` is sent as well-formed (`auto` too would).
      workers: { valid: fc.constant('1'), invalid: notCount('0', '65', '-1') },
    },
    positionals: fc.constant({ args: [] }),
    badPositionals: word.map((w) => [w]),
  },
  migrate: {
    booleans: ['json'],
    strings: {},
    positionals: fc.constant({ args: [] }),
    badPositionals: word.map((w) => [w]),
  },
  ingest: {
    booleans: ['json'],
    strings: {},
    positionals: fc
      .array(fc.constantFrom(...MANIFEST_NAMES), { minLength: 1, maxLength: 3 })
      .map((args) => ({ args: args.map((name) => `@${name}`) })),
    badPositionals: fc.constant([]),
  },
  demo: {
    booleans: ['force', 'json'],
    strings: { seed: { valid: digits(0, 2 ** 31), invalid: notCount('-1') } },
    positionals: fc.constant({ args: [] }),
    badPositionals: word.map((w) => [w]),
  },
  surveys: {
    booleans: ['json'],
    strings: {},
    positionals: fc.oneof(
      fc.constant({ args: ['list'] }),
      fc.tuple(fc.constantFrom('show', 'delete'), fc.oneof(UUID, word)).map(([a, id]) => ({ args: [a, id] })),
    ),
    badPositionals: fc.oneof(
      fc.constant([]),
      fc.constantFrom('show', 'delete').map((a) => [a]),
      fc
        .tuple(fc.constantFrom('list', 'show', 'delete'), word, word)
        .map(([a, b, c]) => (a === 'list' ? [a, b] : [a, b, c])),
      word.filter((w) => !['list', 'show', 'delete'].includes(w)).map((w) => [w]),
    ),
  },
  accounts: {
    booleans: ['json', 'raster'],
    strings: ACCOUNT_STRINGS,
    positionals: fc.constantFrom(...Object.keys(ACCOUNT_SUBCOMMANDS)).chain((name) => {
      const sub = ACCOUNT_SUBCOMMANDS[name] as (typeof ACCOUNT_SUBCOMMANDS)[string];
      return fc.tuple(sub.args, word, fc.boolean()).map(([args, account, asOption]) => {
        // create needs --name: given here, the other options are drawn like any command's.
        if (name === 'create') return { args: [name, ...args], options: [...sub.options, `name=${account}`] };
        if (!sub.account) return { args: [name, ...args], options: sub.options };
        return asOption
          ? { args: [name, ...args], options: [...sub.options, `account=${account}`] }
          : { args: [name, account, ...args], options: sub.options };
      });
    }),
    badPositionals: fc.oneof(
      fc.constant([]),
      word.filter((w) => !Object.hasOwn(ACCOUNT_SUBCOMMANDS, w)).map((w) => [w]),
      fc.constantFrom('show', 'keys', 'usage', 'enable').map((s) => [s]),
      fc.tuple(fc.constantFrom('list', 'create'), word).map(([s, w]) => [s, w]),
      fc.tuple(word, fc.constantFrom('on', 'off', 'maybe')).map(([a, s]) => ['subscription', a, s, 'extra']),
    ),
  },
  storage: {
    booleans: ['dry-run', 'json'],
    strings: {
      grace: { valid: digits(0, 100_000), invalid: notCount('-1') },
      'ingest-grace': { valid: digits(0, 100_000), invalid: notCount('-1') },
    },
    positionals: fc.constant({ args: ['gc'] }),
    badPositionals: fc.oneof(
      fc.constant([]),
      fc.tuple(fc.constant('gc'), word).map(([a, b]) => [a, b]),
      word.filter((w) => w !== 'gc').map((w) => [w]),
    ),
  },
};

/** Options a call takes: the command's, or an accounts subcommand's (its `options`, `name=...` and all). */
function optionsOf(name: string, call: { options?: readonly string[] }): string[] {
  const spec = COMMANDS[name] as CommandSpec;
  if (name !== 'accounts') return [...spec.booleans, ...Object.keys(spec.strings)];
  return ['json', ...(call.options ?? []).map((o) => o.split('=')[0] as string)];
}

/** One option as the command line gives it: `--name value` or `--name=value`. */
function optionTokens(option: string, value: string | undefined, equals: boolean): string[] {
  if (value === undefined) return [`--${option}`];
  return equals || value.startsWith('-') ? [`--${option}=${value}`] : [`--${option}`, value];
}

interface Call {
  name: string;
  positionals: string[];
  options: [string, string | undefined][];
  /** The options this call may take (an accounts subcommand takes its own few). */
  allowed: string[];
}

function render(call: Call, order: number, equalsMask: number): string[] {
  const options = call.options.flatMap(([option, value], i) =>
    optionTokens(option, value, ((equalsMask >> i) & 1) === 1),
  );
  // Options before, between or after the positionals: parseArgs takes them anywhere.
  const at = call.positionals.length === 0 ? 0 : order % (call.positionals.length + 1);
  return [call.name, ...call.positionals.slice(0, at), ...options, ...call.positionals.slice(at)];
}

/** A well-formed call of `name`. */
function wellFormed(name: string): fc.Arbitrary<Call> {
  const spec = COMMANDS[name] as CommandSpec;
  return spec.positionals.chain((call) => {
    const available = optionsOf(name, call).filter((o) => !(call.options ?? []).some((f) => f.startsWith(`${o}=`)));
    const fixed = (call.options ?? [])
      .filter((o) => o.includes('='))
      .map((o) => {
        const [option = '', ...rest] = o.split('=');
        return [option, rest.join('=')] as [string, string];
      });
    return fc.subarray(available).chain((chosen) =>
      fc
        .tuple(
          ...chosen.map((option) => {
            const string = spec.strings[option];
            return string
              ? string.valid.map((v): [string, string | undefined] => [option, v])
              : fc.constant<[string, string | undefined]>([option, undefined]);
          }),
        )
        .map(
          (options): Call => ({
            name,
            positionals: [...call.args],
            options: [...fixed, ...options],
            allowed: [
              ...optionsOf(name, call),
              ...(name === 'accounts' &&
              call.args.length > 1 &&
              !['revoke-key', 'create', 'list'].includes(call.args[0] as string)
                ? ['account']
                : []),
            ],
          }),
        ),
    );
  });
}

const UNKNOWN_OPTIONS = [
  'colour',
  'JSON',
  'Json',
  'forse',
  'verbose',
  'no-json',
  'port',
  'name',
  'seed',
  'grace',
  'x',
  'help-me',
  'é',
];

/** One mistake added to a well-formed call: each is a usage error (exit 2). */
function mistake(name: string, call: Call): fc.Arbitrary<{ call: Call; what: string }> {
  const spec = COMMANDS[name] as CommandSpec;
  const allowed = new Set(call.allowed);
  const known = new Set([...spec.booleans, ...Object.keys(spec.strings)]);
  const addToken = (token: string, what: string) => ({
    call: { ...call, positionals: [...call.positionals, token] },
    what,
  });
  const mistakes: fc.Arbitrary<{ call: Call; what: string }>[] = [
    fc
      .constantFrom(...UNKNOWN_OPTIONS.filter((o) => !known.has(o)))
      .map((o) => addToken(`--${o}`, `unknown option --${o}`)),
    fc.constantFrom('z', 'q', 'J', '1').map((letter) => addToken(`-${letter}`, `unknown short option -${letter}`)),
    badPositionalsCall(name, call),
  ];
  const booleans = spec.booleans.filter((b) => allowed.has(b));
  if (booleans.length > 0) {
    mistakes.push(
      fc
        .tuple(fc.constantFrom(...booleans), fc.constantFrom('yes', '1', '', 'false'))
        .map(([b, v]) => addToken(`--${b}=${v}`, `--${b} given a value`)),
    );
  }
  const strings = Object.keys(spec.strings).filter((o) => allowed.has(o));
  if (strings.length > 0) {
    // A string option at the very end, with no value.
    mistakes.push(fc.constantFrom(...strings).map((o) => addToken(`--${o}`, `--${o} without its value`)));
    const checked = strings.filter((o) => spec.strings[o]?.invalid);
    if (checked.length > 0) {
      mistakes.push(
        fc
          .constantFrom(...checked)
          .chain((o) => ((spec.strings[o] as StringOption).invalid as fc.Arbitrary<string>).map((v) => [o, v] as const))
          .map(([o, v]) => ({
            call: { ...call, options: [...call.options.filter(([x]) => x !== o), [o, v] as [string, string]] },
            what: `--${o} ${JSON.stringify(v)}`,
          })),
      );
    }
  }
  if (name === 'accounts') {
    const notTaken = ['name', 'raster', 'allowance', 'rate-limit', 'interval', 'account'].filter(
      (o) => !allowed.has(o),
    );
    if (notTaken.length > 0) {
      mistakes.push(
        fc.constantFrom(...notTaken).map((o) => ({
          call: {
            ...call,
            options: [...call.options, [o, o === 'raster' ? undefined : '5'] as [string, string | undefined]],
          },
          what: `accounts ${call.positionals[0]} given --${o}`,
        })),
      );
    }
    const counted = call.positionals[0] === 'allowance' || call.positionals[0] === 'rate-limit';
    if (counted) {
      mistakes.push(
        notCount('0')
          .filter((v) => call.positionals[0] === 'rate-limit' || v !== '0')
          .map((v) => ({
            call: { ...call, positionals: [...call.positionals.slice(0, -1), v] },
            what: `accounts ${call.positionals[0]} ${JSON.stringify(v)}`,
          })),
      );
    }
  }
  return fc.oneof(...mistakes);
}

function badPositionalsCall(name: string, call: Call): fc.Arbitrary<{ call: Call; what: string }> {
  const spec = COMMANDS[name] as CommandSpec;
  return spec.badPositionals.map((positionals) => {
    // accounts: options the new subcommand may not take would be a second mistake; keep --json.
    const options = name === 'accounts' ? call.options.filter(([o]) => o === 'json') : call.options;
    return {
      call: { ...call, positionals: [...positionals], options },
      what: `positionals ${JSON.stringify(positionals)}`,
    };
  });
}

const COMMAND_NAMES = Object.keys(COMMANDS);

/** Any case: well-formed, with one mistake, help, an unknown command, or hostile tokens. */
export function cliCase(): fc.Arbitrary<CliCase> {
  const layout = fc.record({ order: fc.nat(), equals: fc.nat() });
  const perCommand = COMMAND_NAMES.map((name) =>
    fc.tuple(wellFormed(name), layout, fc.nat()).chain(([call, { order, equals }, roll]) => {
      const good = fc.constant<CliCase>({
        argv: render(call, order, equals),
        outcome: 'accepted',
        what: 'well-formed',
      });
      const bad = mistake(name, call).map(
        (m): CliCase => ({ argv: render(m.call, order, equals), outcome: 'usage', what: m.what }),
      );
      return roll % 5 < 2 ? good : bad;
    }),
  );
  const help = fc
    .tuple(
      fc.constantFrom(...COMMAND_NAMES),
      fc.constantFrom('--help', '-h'),
      fc.array(hostileText(), { maxLength: 2 }),
    )
    .map(([name, flag, rest]): CliCase => ({ argv: [name, ...rest, flag], outcome: 'help', what: 'help' }));
  const unknownCommand = hostileText()
    .filter((t) => t !== '' && !COMMAND_NAMES.includes(t) && !['--help', '-h', 'help', '--version'].includes(t))
    .map((name): CliCase => ({ argv: [name], outcome: 'usage', what: 'unknown command' }));
  const hostile = fc
    .tuple(
      fc.constantFrom(...COMMAND_NAMES),
      fc.array(
        fc.oneof(
          hostileText(),
          fc.constantFrom('--', '-', '--json', '--port', '--=', '---', '--name=', '-h=x'),
          hostileText().map((t) => `--${t}`),
          hostileText().map((t) => `--json=${t}`),
        ),
        { maxLength: 5 },
      ),
    )
    .map(([name, tokens]): CliCase => ({ argv: [name, ...tokens], outcome: 'any', what: 'hostile tokens' }));
  return fc.oneof(
    { weight: 12, arbitrary: fc.oneof(...perCommand) },
    { weight: 1, arbitrary: help },
    { weight: 1, arbitrary: unknownCommand },
    { weight: 3, arbitrary: hostile },
  );
}
