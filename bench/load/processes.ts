/**
 * Servers started by a benchmark: each in its own process group (so its workers go with it), its
 * output in a log file (a pipe nobody reads would block it), and killed when the benchmark exits
 * for any reason, including Ctrl-C, so that no contender outlives the run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Service {
  /** Stops every process the service started and waits for them; safe to call twice. */
  stop(): Promise<void>;
}

/** Server process groups still running. */
const live = new Set<ChildProcess>();
/** Plain children (load generators) killed on exit too, by pid: they lead no group. */
const clients = new Set<ChildProcess>();
const scratch = new Set<string>();
const everStarted: number[] = [];
let hooked = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the whole group is gone already.
  }
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  // 'exit' handlers must be synchronous: SIGKILL is the only stop that needs no waiting.
  process.on('exit', () => {
    for (const child of live) killGroup(child, 'SIGKILL');
    for (const child of clients) child.kill('SIGKILL');
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.on(signal, () => process.exit(code));
  }
}

/** A new temp directory, removed by `removeScratch` or, failing that, when the benchmark exits. */
export async function scratchDir(prefix: string): Promise<string> {
  hookExit();
  const dir = await mkdtemp(join(tmpdir(), `nadir-bench-${prefix}-`));
  scratch.add(dir);
  return dir;
}

export async function removeScratch(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  scratch.delete(dir);
}

/** A TCP port that was free a moment ago (the OS picks it), for a server we are about to start. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface Started {
  child: ChildProcess;
  log: string;
  /** The log's last lines, for error messages. */
  tail(): string;
}

/** Kills `child` (a client such as wrk, not a server) if the benchmark exits while it runs. */
export function killOnExit(child: ChildProcess): void {
  hookExit();
  clients.add(child);
  child.once('exit', () => clients.delete(child));
  child.once('error', () => clients.delete(child));
}

/** Spawns `command` as the leader of a new process group, output appended to `log`. */
export function startGroup(command: string, args: string[], log: string, env: NodeJS.ProcessEnv = {}): Started {
  hookExit();
  const fd = openSync(log, 'a');
  const child = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd], env: { ...process.env, ...env } });
  closeSync(fd);
  live.add(child);
  if (child.pid !== undefined) everStarted.push(child.pid);
  child.once('exit', () => live.delete(child));
  child.once('error', () => live.delete(child));
  const tail = () => {
    try {
      return readFileSync(log, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
    } catch {
      return '';
    }
  };
  return { child, log, tail };
}

/** Process groups started so far (their leaders' pids), for checking that none is left running. */
export function startedGroups(): number[] {
  return [...everStarted];
}

/** `start`'s result with the process groups started while it ran: the server's, whose CPU time a benchmark reads. */
export async function withGroups<T>(start: () => Promise<T>): Promise<{ started: T; groups: number[] }> {
  const before = everStarted.length;
  const started = await start();
  return { started, groups: everStarted.slice(before) };
}

/** SIGTERM to the group, SIGKILL after `graceMs`; then SIGKILL again for any straggler in the group. */
export async function stopGroup(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    killGroup(child, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
  killGroup(child, 'SIGKILL');
  live.delete(child);
}

/** Polls `url` until it answers (any HTTP status) or `timeoutMs` passes; fails early if `child` exits. */
export async function waitForHttp(url: string, started: Started, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (started.child.exitCode !== null || started.child.signalCode !== null) {
      throw new Error(`${started.child.spawnfile} exited before answering ${url}:\n${started.tail()}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${url} did not answer in ${timeoutMs} ms:\n${started.tail()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
