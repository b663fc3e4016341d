/**
 * `nadir` as a real process (bin/nadir, the compiled CLI that the README's set-up builds): a
 * server on a port of its own, or one command, with the environment a test gives it.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from './fixtures.js';
import { noteSecretsIn, watchLogLine } from './secret-watch.js';

const run = promisify(execFile);
const NADIR = join(PROJECT_ROOT, 'bin/nadir');
/** How long a stopping server may take (it finishes requests, closes its stores: seconds). */
const STOP_WITHIN_MS = 20_000;

export interface NadirServer {
  port: number;
  url: string;
  /** Every line the server printed (its JSON log on stdout, then stderr). */
  lines: string[];
  child: ChildProcess;
  /**
   * SIGTERM (a graceful stop) or another signal; resolves with the exit code. A server still
   * running STOP_WITHIN_MS later is killed (SIGKILL: the code is null), so a server that does not
   * stop fails its test instead of hanging the suite.
   */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startNadirServer(env: NodeJS.ProcessEnv, port: number): Promise<NadirServer> {
  const child = spawn(process.execPath, [NADIR, 'serve'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env, NADIR_PORT: String(port), NADIR_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const source = `nadir serve on port ${port}`;
  // Every line is watched for secrets (secret-watch.ts); a line may come in several chunks.
  const collector = () => {
    let partial = '';
    return (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts.filter(Boolean)) {
        lines.push(line);
        watchLogLine(line, source);
      }
    };
  };
  child.stdout?.on('data', collector());
  child.stderr?.on('data', collector());
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nadir serve exited (${child.exitCode}):\n${lines.join('\n')}`);
    const ready = await fetch(`${url}/ready`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`nadir serve not ready in 30 s:\n${lines.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    port,
    url,
    lines,
    child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill(signal);
      const late = setTimeout(() => {
        lines.push(`(still running ${STOP_WITHIN_MS / 1000} s after ${signal}: killed)`);
        child.kill('SIGKILL');
      }, STOP_WITHIN_MS);
      const code = await exited;
      clearTimeout(late);
      return code;
    },
  };
}

/** One `nadir` command; never throws for a non-zero exit (the test reads `code`). */
export async function nadirCommand(
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [NADIR, ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
      maxBuffer: 16 << 20,
    });
    // Keys a command prints (`accounts create`, `issue-key`) are secrets the servers must not log.
    noteSecretsIn(stdout);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    noteSecretsIn(failed.stdout ?? '');
    return { code: failed.code ?? 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
