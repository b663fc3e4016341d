/**
 * Timing and memory of one render, in-process (nadir's engine) or as GDAL command-line tools.
 * Used by bench/raster.ts, which runs this module's loop in a fresh process so the ingest that
 * built the survey does not inflate the figures.
 */
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { RasterEngine, RenderRequest } from '../src/raster/index.js';

export interface Sample {
  ms: number;
  /** Peak resident memory, MB: the CLI's max RSS (NaN for in-process runs: see raster-probe.ts). */
  peakMb: number;
  /** Longest event-loop stall during the run, ms (in-process only). */
  loopMaxMs?: number;
  bytes: number;
}

async function procStatus(field: 'VmHWM' | 'VmRSS'): Promise<number> {
  const text = await readFile('/proc/self/status', 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** Resets this process's peak-RSS mark (Linux: writing 5 to clear_refs). */
export async function resetPeak(): Promise<boolean> {
  try {
    await writeFile('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

export async function idleRssMb(): Promise<number> {
  return procStatus('VmRSS');
}

/** This process's peak RSS since the last `resetPeak`, MB. */
export async function peakRssMb(): Promise<number> {
  return procStatus('VmHWM');
}

/** One in-process render, timed, with the longest event-loop stall during it. */
export async function measureEngine(engine: RasterEngine, request: RenderRequest, save?: string): Promise<Sample> {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const started = performance.now();
  const result = await engine.renderAoi(request);
  const ms = performance.now() - started;
  loop.disable();
  if (save) await writeFile(save, result.body);
  return { ms, peakMb: Number.NaN, loopMaxMs: loop.max / 1e6, bytes: result.body.length };
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

/** Runs commands one after another under /usr/bin/time; wall time includes process start-up. */
export async function measureCommands(commands: string[][], output: string, scratch: string): Promise<Sample> {
  let peakMb = 0;
  const started = performance.now();
  for (const [command, ...args] of commands) {
    const rssFile = `${scratch}.rss`;
    await new Promise<void>((resolve, reject) => {
      const child = spawn('/usr/bin/time', ['-f', '%M', '-o', rssFile, command as string, ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${stderr}`))));
    });
    peakMb = Math.max(peakMb, Number((await readFile(rssFile, 'utf8')).trim().split('\n').pop()) / 1024);
    await rm(rssFile, { force: true });
  }
  const ms = performance.now() - started;
  const bytes = (await readFile(output)).length;
  return { ms, peakMb, bytes };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
