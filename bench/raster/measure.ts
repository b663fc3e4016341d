/**
 * Timing, CPU time and memory of one render: in-process (nadir's engine), through a server's HTTP
 * endpoint, or as command-line tools under /usr/bin/time. CPU time (user + system, every thread)
 * next to wall time shows how much of a render ran in parallel and how much was waiting for a core.
 */
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { RasterEngine, RenderRequest } from '../../src/raster/index.js';

export interface Sample {
  ms: number;
  /** Peak resident memory, MB: the command's max RSS, or the server's VmHWM during a download (NaN in-process). */
  peakMb: number;
  /** CPU seconds (user + system, all threads) of the process(es) doing the work. */
  cpuSeconds?: number;
  /** Longest event-loop stall during the run, ms (in-process only). */
  loopMaxMs?: number;
  bytes: number;
}

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux this runs on

async function procStatus(field: 'VmHWM' | 'VmRSS', pid: number | 'self' = 'self'): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** utime + stime of a process, all its threads, in seconds. */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Resets a process's peak-RSS mark (Linux: writing 5 to clear_refs); this process's by default. */
export async function resetPeak(pid: number | 'self' = 'self'): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export async function idleRssMb(pid: number | 'self' = 'self'): Promise<number> {
  return procStatus('VmRSS', pid);
}

/** A process's peak RSS since the last `resetPeak`, MB (this process's by default). */
export async function peakRssMb(pid: number | 'self' = 'self'): Promise<number> {
  return procStatus('VmHWM', pid);
}

/** One in-process render, timed, with the longest event-loop stall during it. */
export async function measureEngine(engine: RasterEngine, request: RenderRequest, save?: string): Promise<Sample> {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await engine.renderAoi(request);
  const ms = performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  loop.disable();
  if (save) await writeFile(save, result.body);
  return {
    ms,
    peakMb: Number.NaN,
    cpuSeconds: (user + system) / 1e6,
    loopMaxMs: loop.max / 1e6,
    bytes: result.body.length,
  };
}

/**
 * One download from a server, timed to its last byte, with the server's peak RSS (VmHWM) and CPU
 * time during it. The peak mark is reset first, so the figure is the server's whole footprint at
 * its highest during this request (what it holds already included).
 */
export async function measureDownload(url: string, serverPid: number, save?: string): Promise<Sample> {
  const reset = await resetPeak(serverPid);
  const cpuBefore = await cpuSecondsOf(serverPid);
  const started = performance.now();
  const response = await fetch(url);
  const body = Buffer.from(await response.arrayBuffer());
  const ms = performance.now() - started;
  if (response.status !== 200) {
    const shown = url.replace(/transactionToken=[^&]+/, 'transactionToken=...');
    throw new Error(`${shown} answered ${response.status}: ${body.toString('utf8', 0, 300)}`);
  }
  const cpuSeconds = (await cpuSecondsOf(serverPid)) - cpuBefore;
  const peakMb = reset ? await peakRssMb(serverPid) : Number.NaN;
  if (save) await writeFile(save, body);
  return { ms, peakMb, cpuSeconds, bytes: body.length };
}

/**
 * Runs `node --import tsx <args>` and parses its standard output as JSON: a fresh process, so
 * its memory figures owe nothing to what ran before.
 */
export async function spawnJson<T>(args: string[], env: NodeJS.ProcessEnv = {}): Promise<T> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}`);
  return JSON.parse(stdout) as T;
}

/**
 * Runs commands one after another under /usr/bin/time; wall time includes process start-up. Peak
 * memory is the largest of the commands', CPU time their sum.
 */
export async function measureCommands(commands: string[][], output: string, scratch: string): Promise<Sample> {
  let peakMb = 0;
  let cpuSeconds = 0;
  const started = performance.now();
  for (const [command, ...args] of commands) {
    const timeFile = `${scratch}.time`;
    await new Promise<void>((resolve, reject) => {
      const child = spawn('/usr/bin/time', ['-f', '%M %U %S', '-o', timeFile, command as string, ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${stderr}`))));
    });
    const [rssKb, user, system] = ((await readFile(timeFile, 'utf8')).trim().split('\n').pop() ?? '').split(' ');
    peakMb = Math.max(peakMb, Number(rssKb) / 1024);
    cpuSeconds += Number(user) + Number(system);
    await rm(timeFile, { force: true });
  }
  const ms = performance.now() - started;
  const bytes = (await readFile(output)).length;
  return { ms, peakMb, cpuSeconds, bytes };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
