/**
 * How long a `nadir` command takes to start and answer (issue 33: each command builds only the
 * parts it uses; `nadir accounts list --json` under 0.5 s). The compiled CLI (bin/nadir, as users
 * run it) on the embedded default (SQLite, local files) with a few accounts and surveys, against
 * two references measured in the same rounds: bare node starting and exiting (the floor no command
 * can go under), and node loading every module `nadir serve` loads (what every command paid when
 * each built the whole composition root).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { SectionOptions } from '../report/section.js';
import { START_CONTENDERS, type StartContender, type StartRaw, type StartSample } from './raw.js';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const WORK = join(ROOT, 'bench/work/cli');
const DATA = join(WORK, 'data');
const NADIR = join(ROOT, 'bin/nadir');

const COMMANDS: Record<StartContender, string[]> = {
  bareNode: [process.execPath, '-e', '0'],
  version: [process.execPath, NADIR, '--version'],
  accountsList: [process.execPath, NADIR, 'accounts', 'list', '--json'],
  surveysList: [process.execPath, NADIR, 'surveys', 'list', '--json'],
  migrate: [process.execPath, NADIR, 'migrate', '--json'],
  // What `nadir serve` imports: the composition root and the HTTP server.
  allModules: [
    process.execPath,
    '--input-type=module',
    '-e',
    `await import(${JSON.stringify(join(ROOT, 'dist/composition.js'))}); await import(${JSON.stringify(join(ROOT, 'dist/api/server.js'))});`,
  ],
};

async function nadir(...args: string[]): Promise<string> {
  const { stdout } = await exec(process.execPath, [NADIR, ...args], { env: { ...process.env, NADIR_DATA_DIR: DATA } });
  return stdout;
}

/** A data folder with a few accounts (one with several keys) and no surveys: made once. */
async function dataFolder(fresh: boolean): Promise<StartRaw['rows']> {
  if (fresh) await rm(WORK, { recursive: true, force: true });
  await mkdir(DATA, { recursive: true });
  let { accounts } = JSON.parse(await nadir('accounts', 'list', '--json')) as { accounts: unknown[] };
  for (let i = accounts.length; i < 20; i++) await nadir('accounts', 'create', '--name', `bench-${i}`, '--raster');
  ({ accounts } = JSON.parse(await nadir('accounts', 'list', '--json')) as { accounts: unknown[] });
  const { total } = JSON.parse(await nadir('surveys', 'list', '--json')) as { total: number };
  return { accounts: accounts.length, surveys: total };
}

/** One run under /usr/bin/time: wall time from spawn to exit, and the process's CPU. */
async function timed(argv: string[]): Promise<StartSample> {
  const timeFile = join(WORK, 'time.txt');
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', timeFile, ...argv], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, NADIR_DATA_DIR: DATA, NADIR_LOG_LEVEL: 'warn' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${argv.join(' ')}: ${code} ${stderr}`))));
  });
  const ms = performance.now() - started;
  const [user, system] = (await readFile(timeFile, 'utf8')).trim().split('\n').pop()?.split(' ') ?? [];
  return { ms, cpuMs: (Number(user) + Number(system)) * 1000 };
}

export async function measureStart(options: SectionOptions): Promise<StartRaw> {
  const started = performance.now();
  const rows = await dataFolder(options.fresh);
  const rounds = options.quick ? 3 : 15;
  const loadStart = loadavg();
  const samples = Object.fromEntries(START_CONTENDERS.map((c) => [c, [] as StartSample[]])) as StartRaw['samples'];
  // Each contender once first, thrown away: the files' first read from disk is not a start-up.
  for (const contender of START_CONTENDERS) await timed(COMMANDS[contender]);
  for (let round = 0; round < rounds; round++) {
    // Rotated, so no contender always runs right after the same other one.
    const order = START_CONTENDERS.map((_, i) => START_CONTENDERS[(i + round) % START_CONTENDERS.length]!);
    for (const contender of order) samples[contender].push(await timed(COMMANDS[contender]));
    options.log(`cli: round ${round + 1}/${rounds}`);
  }
  return {
    rounds,
    commands: COMMANDS,
    rows,
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', loadStart, loadEnd: loadavg() },
    samples,
    seconds: (performance.now() - started) / 1000,
  };
}
