/**
 * Throwaway PostgreSQL (with PostGIS) and Redis servers for tests: the real Debian packages,
 * started on a free loopback port in a temporary folder and stopped afterwards. No fakes: the
 * stores under test talk to the real engines, as a deployment does. `npm test` installs the
 * packages (scripts/test.sh); a machine without them skips these tests with a message.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { realClockEnvironment } from './clock.js';

const execFileAsync = promisify(execFile);
// The servers and their command-line tools run on the real clock, with a deadline: under
// scripts/test-dates.sh's libfaketime, redis-server and redis-cli hang (its clock_gettime clashes
// with jemalloc), and the date under test is nadir's clock, not theirs.
const run = (command: string, args: string[], options: { uid?: number; gid?: number; cwd?: string } = {}) =>
  execFileAsync(command, args, { timeout: 30_000, env: realClockEnvironment(), ...options });
const serverOptions = { stdio: ['ignore', 'pipe', 'pipe'] as ('ignore' | 'pipe')[], env: realClockEnvironment() };
const PG_BIN = '/usr/lib/postgresql/15/bin';

export const SKIP_POSTGRES = existsSync(join(PG_BIN, 'postgres'))
  ? false
  : 'PostgreSQL 15 is not installed (scripts/test.sh installs postgresql-15 and postgresql-15-postgis-3)';
export const SKIP_REDIS = existsSync('/usr/bin/redis-server')
  ? false
  : 'redis-server is not installed (scripts/test.sh installs it)';

/** A port nothing listens on now (the kernel's choice), for a server we start next. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, child: ChildProcess, log: () => string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}):\n${log()}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} did not start in 20 s:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/** Children still running when the test process ends are stopped with it. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface PostgresServer {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/<name>`, for a database made by createDatabase. */
  url(database: string): string;
  /** A new empty database (PostGIS is the store's own migration to create). */
  createDatabase(name: string): Promise<string>;
  /** SQL run as the superuser with psql, for a test's own checks. */
  psql(database: string, sql: string): Promise<string>;
  /** An immediate shutdown, keeping the data and the port, until `restart`. */
  halt(): Promise<void>;
  restart(): Promise<void>;
  /** SIGSTOP to the server and its backends: connections stay open, nothing answers, until `thaw`. */
  freeze(): Promise<void>;
  thaw(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * initdb as the postgres user (PostgreSQL refuses to run as root) into a temporary folder, then
 * the server on a free loopback port with fsync off: a test's data need not survive a crash.
 * `settings`: more server settings (`-c name=value`), as a benchmark's deployment would have.
 */
export async function startPostgres(settings: Record<string, string> = {}): Promise<PostgresServer> {
  const dir = await mkdtemp(join(tmpdir(), 'nadir-pg-'));
  // Run as the postgres user directly (not through runuser, which would not pass signals on).
  const user = {
    uid: Number((await run('id', ['-u', 'postgres'])).stdout),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout),
  };
  await chown(dir, user.uid, user.gid);
  await run(join(PG_BIN, 'initdb'), ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync'], {
    ...user,
    cwd: dir,
  });
  const port = await freePort();
  let output = '';
  let child: ChildProcess;
  const start = () => {
    child = spawn(
      join(PG_BIN, 'postgres'),
      [
        '-D',
        join(dir, 'data'),
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
        ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ],
      { ...serverOptions, ...user, cwd: dir },
    );
    running.add(child);
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
  };
  start();
  /** Every process of the server: the postmaster and its backends. */
  const signalAll = async (signal: 'SIGSTOP' | 'SIGCONT') => {
    child.kill(signal);
    await run('pkill', [`-${signal.slice(3)}`, '-P', String(child.pid)]).catch(() => undefined);
  };
  const psql = async (database: string, sql: string) =>
    (
      await run('psql', [
        '-X',
        '-q',
        '-t',
        '-A',
        '-v',
        'ON_ERROR_STOP=1',
        '-h',
        dir,
        '-p',
        String(port),
        '-U',
        'postgres',
        '-d',
        database,
        '-c',
        sql,
      ])
    ).stdout.trim();
  const ready = () =>
    waitFor(
      'postgres',
      async () => (await psql('postgres', 'SELECT 1')) === '1',
      child,
      () => output,
    );
  await ready();
  return {
    port,
    async halt() {
      // SIGQUIT: immediate shutdown (pg_ctl stop -m immediate): connections cut, no checkpoint.
      await stopChild(child, 'SIGQUIT');
      running.delete(child);
    },
    async restart() {
      start();
      await ready();
    },
    freeze: () => signalAll('SIGSTOP'),
    thaw: () => signalAll('SIGCONT'),
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async createDatabase(name) {
      await psql('postgres', `CREATE DATABASE "${name}"`);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    psql,
    async stop() {
      await signalAll('SIGCONT');
      // SIGINT: PostgreSQL's fast shutdown (clients are disconnected, no wait for them).
      await stopChild(child, 'SIGINT');
      running.delete(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisServer {
  port: number;
  url: string;
  /** Stops the server, keeping its port and folder, so a test can see what happens while it is down. */
  pause(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence). */
  resume(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing answers (a hung server), until `thaw`. */
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

/** redis-server with a config file in a temporary folder, no persistence, on a free loopback port. */
export async function startRedis(): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'nadir-redis-'));
  const port = await freePort();
  const config = join(dir, 'redis.conf');
  await writeFile(config, `port ${port}\nbind 127.0.0.1\nsave ""\nappendonly no\ndir ${dir}\ndaemonize no\n`);
  let child: ChildProcess | undefined;
  let output = '';
  const start = async () => {
    const started = spawn('redis-server', [config], serverOptions);
    child = started;
    running.add(started);
    started.stdout?.on('data', (chunk) => (output += chunk));
    started.stderr?.on('data', (chunk) => (output += chunk));
    const ping = async () =>
      (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'PING'])).stdout.trim() === 'PONG';
    await waitFor('redis-server', ping, started, () => output);
  };
  const halt = async () => {
    if (!child) return;
    await stopChild(child, 'SIGKILL');
    running.delete(child);
    child = undefined;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pause: halt,
    resume: start,
    freeze: () => child?.kill('SIGSTOP'),
    thaw: () => child?.kill('SIGCONT'),
    async stop() {
      if (child) child.kill('SIGCONT');
      await halt();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export const SKIP_NGINX = existsSync('/usr/sbin/nginx')
  ? false
  : 'nginx is not installed (scripts/test.sh installs nginx-light)';

export interface NginxServer {
  port: number;
  url: string;
  stop(): Promise<void>;
}

/**
 * nginx with `site` (a server and upstream configuration, e.g. deploy/nginx/nadir.conf) inside a
 * minimal main configuration whose logs, pid and temporary files live in a temporary folder.
 */
export async function startNginx(site: string, port: number): Promise<NginxServer> {
  const dir = await mkdtemp(join(tmpdir(), 'nadir-nginx-'));
  const config = join(dir, 'nginx.conf');
  await writeFile(
    config,
    `daemon off;
worker_processes 2;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
user root;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${site}
}
`,
  );
  let output = '';
  const child = spawn('/usr/sbin/nginx', ['-c', config, '-p', dir], serverOptions);
  running.add(child);
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
  await waitFor('nginx', listening, child, () => output);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      await stopChild(child, 'SIGQUIT');
      running.delete(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface S3Server {
  port: number;
  /** NADIR_S3_ENDPOINT. */
  endpoint: string;
  /** The environment a nadir process needs to reach it (s3rver's fixed keys). */
  env: NodeJS.ProcessEnv;
  /** Killed (SIGKILL), keeping its objects and port, until `restart`. */
  halt(): Promise<void>;
  restart(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing answers, until `thaw`. */
  freeze(): void;
  thaw(): void;
  /** Revokes the access key nadir signs with (every request a 403 InvalidAccessKeyId), until `restoreKeys`. */
  revokeKeys(): Promise<void>;
  restoreKeys(): Promise<void>;
  /** The server's process id now (a restart makes a new process): the benchmark reads its CPU time. */
  pid(): number | undefined;
  /** Requests answered and bytes of GET answers' bodies since this process started (the benchmark's bucket counts). */
  answered(): Promise<{ requests: number; bytes: number }>;
  stop(): Promise<void>;
}

/**
 * An S3-compatible server, npm's @20minutes/s3rver, in a process of its own (it speaks S3 over
 * HTTP, checks request signatures, and keeps objects in a temporary folder), with `buckets`.
 */
export async function startS3(...buckets: string[]): Promise<S3Server> {
  const dir = await mkdtemp(join(tmpdir(), 'nadir-s3-'));
  const port = await freePort();
  let output = '';
  let child: ChildProcess;
  const start = async () => {
    const started = spawn(
      process.execPath,
      [join(import.meta.dirname, 's3rver-process.mjs'), dir, String(port), ...buckets],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    running.add(started);
    started.stdout?.on('data', (chunk) => (output += chunk));
    started.stderr?.on('data', (chunk) => (output += chunk));
    await waitFor(
      's3rver',
      async () => output.includes(`listening`),
      started,
      () => output,
    );
  };
  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  /** SIGUSR2 toggles the key (s3rver-process.mjs); done when it says so. */
  const signalled = async (said: string) => {
    const before = output.split(said).length;
    child.kill('SIGUSR2');
    await waitFor(
      `s3rver ${said}`,
      async () => output.split(said).length > before,
      child,
      () => output,
    );
  };
  return {
    port,
    endpoint,
    env: {
      NADIR_S3_ENDPOINT: endpoint,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    async halt() {
      await stopChild(child, 'SIGKILL');
      running.delete(child);
    },
    async restart() {
      output = '';
      await start();
    },
    freeze: () => child.kill('SIGSTOP'),
    thaw: () => child.kill('SIGCONT'),
    revokeKeys: () => signalled('keys revoked'),
    restoreKeys: () => signalled('keys restored'),
    pid: () => child.pid,
    async answered() {
      const counted = () => [...output.matchAll(/counted (\d+) (\d+)\n/g)];
      const before = counted().length;
      child.kill('SIGHUP');
      await waitFor(
        's3rver counts',
        async () => counted().length > before,
        child,
        () => output,
      );
      const [, requests, bytes] = counted().at(-1) as RegExpMatchArray;
      return { requests: Number(requests), bytes: Number(bytes) };
    },
    async stop() {
      child.kill('SIGCONT');
      await stopChild(child, 'SIGTERM');
      running.delete(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
