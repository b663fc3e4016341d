import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
// The generator is its own workspace package (packages/demo-town), imported in process rather than
// spawned: its progress callback feeds this command's progress line, its errors arrive as
// exceptions, and its typed result is what the stamp below caches. The package resolves to its
// compiled dist/, so its render workers are plain JavaScript even when nadir runs under tsx.
import { DEFAULT_SEED, type DemoSurveyOutput, GENERATOR_REVISION, generateDemoTown } from '@nadir/demo-town';
import type { AccountStore } from '../../accounts/index.js';
import { DEMO_POINT } from '../../api/http/demo-examples.js';
import type { Config } from '../../config/config.js';
import { boundIngestMemory } from '../../ingest/ingest-memory.js';
import { type CliContext, type Command, parseCommandArgs, printJson, wholeNumber } from '../command.js';
import { collectGarbage } from '../full-garbage-collection.js';
import { createProgressReporter } from '../progress.js';

const DEMO_ACCOUNT = 'demo';

/**
 * The demo account's key is kept in the data folder so every `nadir demo` can print it: a
 * convenience for a local demo only (real keys are shown once and stored hashed).
 */
async function demoApiKey(accounts: AccountStore, keyFile: string): Promise<{ accountId: string; apiKey: string }> {
  const account =
    (await accounts.getAccountByName(DEMO_ACCOUNT)) ??
    (await accounts.createAccount({ name: DEMO_ACCOUNT, rasterSubscription: true, monthlyAllowance: 1000 }));
  const saved = (await readFile(keyFile, 'utf8').catch(() => '')).trim();
  if (saved) {
    const found = await accounts.lookupApiKey(saved);
    if (found?.account.id === account.id) return { accountId: account.id, apiKey: saved };
  }
  const issued = await accounts.issueApiKey(account.id);
  await writeFile(keyFile, `${issued.key}\n`, { mode: 0o600 });
  return { accountId: account.id, apiKey: issued.key };
}

/** Where `nadir serve` with this configuration is reached from this machine. */
function serverUrl(config: Config): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  // 0.0.0.0 and :: listen on every interface; a browser on this machine asks localhost.
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? 'localhost' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** What a newcomer does next: the same data folder (environment) for serve, then the pages and a first call. */
function nextSteps(url: string, apiKey: string): string {
  return [
    'Next:',
    '  nadir serve                 (same environment: it serves this data folder)',
    `  ${url}/                     the map page`,
    `  ${url}/docs                 the API, with "Try it out"`,
    `  curl "${url}/staticmap/v2/coverage.json?apikey=${apiKey}&point=${DEMO_POINT}&radius=50&resources=TrueOrtho"`,
    '',
  ].join('\n');
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Generate the demo town (Mexico Beach, FL), ingest its surveys and create the demo account',
  usage: `nadir demo [--force] [--seed N] [--json]

Idempotent: the town is generated into <data>/demo once (per seed), surveys already in the
catalogue are not ingested again (unless --force), and the demo account and its key are reused.
Prints the demo API key (also kept in <data>/demo-api-key).`,
  async run(args: string[], ctx: CliContext) {
    const { values } = parseCommandArgs(
      args,
      { force: { type: 'boolean' }, seed: { type: 'string' }, json: { type: 'boolean' } },
      false,
    );
    const seed = values.seed === undefined ? DEFAULT_SEED : wholeNumber('--seed', values.seed, 0);
    boundIngestMemory();
    const services = await ctx.surveyWriter();
    const started = Date.now();
    const outDir = join(ctx.config.dataDir, 'demo', `town-${seed}`);
    // A town made by an older generator revision is made again.
    const stamp = join(outDir, `.complete-r${GENERATOR_REVISION}`);
    let outputs = JSON.parse((await readFile(stamp, 'utf8').catch(() => 'null')) ?? 'null') as
      | DemoSurveyOutput[]
      | null;
    if (!outputs || values.force) {
      const progress = createProgressReporter(ctx.stderr, 'demo: generating town', services.clock);
      outputs = await generateDemoTown({ outDir, seed, onProgress: (d, t, label) => progress.update(label, d / t) });
      progress.done(`${outputs.length} surveys generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      await writeFile(stamp, JSON.stringify(outputs));
      // The generator has stopped its render workers, and its height model and ground (650 MB of
      // SharedArrayBuffers) are garbage: freed now rather than whenever V8 next collects, which
      // could be well into the ingest, on top of its own memory (docs/demo.md, "Memory").
      collectGarbage();
    }
    const ingestStarted = Date.now();
    for (const output of outputs) {
      if (!values.force && (await services.catalogue.get(output.id))) continue;
      const progress = createProgressReporter(ctx.stderr, `demo: ingest ${output.captureDate}`, services.clock);
      const survey = await services.ingestor.ingestManifestFile(output.manifestPath, (e) =>
        progress.update(e.label, e.fraction),
      );
      progress.done(`survey ${survey.id} version ${survey.version}`);
    }
    const ingestSeconds = (Date.now() - ingestStarted) / 1000;
    const key = await demoApiKey(services.accounts, join(ctx.config.dataDir, 'demo-api-key'));
    const summary = {
      ...key,
      surveys: outputs.map(({ id, captureDate, name }) => ({ id, captureDate, name })),
      seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
      ingestSeconds: Number(ingestSeconds.toFixed(1)),
    };
    if (values.json) printJson(ctx, { ...summary, url: serverUrl(ctx.config) });
    else {
      ctx.stdout.write(`Demo town ready: ${outputs.length} surveys (${summary.seconds} s).\n`);
      ctx.stdout.write(`Demo API key: ${key.apiKey}\n\n${nextSteps(serverUrl(ctx.config), key.apiKey)}`);
    }
    return 0;
  },
};
