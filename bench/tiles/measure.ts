/**
 * The measurement matrix: every target at every connection count, in rounds. Within a round the
 * targets take turns (the order rotates from round to round), so a burst of other work on this
 * shared machine lands on several targets rather than on all the runs of one; ratios are then
 * taken between runs of the same round and connection count.
 */
import { cpuBetween, sampleCpu } from '../load/cpu.js';
import { assertAllStatus, runWrk, type WrkResult } from '../load/wrk.js';

export interface Target {
  id: string;
  name: string;
  urls: string[];
  headersByUrl?: Record<string, Record<string, string>>;
  /** The status every answer must have. */
  expect: 200 | 304;
  /** Asked for to drain a server's queue before a run (the first URL by default). */
  drainUrl?: string;
  /** The server's process groups: their CPU time over the measured run is the point's cpuMs. */
  groups?: number[];
}

export interface Point {
  target: string;
  connections: number;
  round: number;
  requestsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  requests: number;
  transferPerSec: number;
  statuses: Record<string, number>;
  /** A `once` run that walked its whole list early: the seconds the walk took (wrk.ts). */
  walkedSeconds?: number;
  /** Set when the run failed its status assertion (or wrk failed): the point's figures are not used. */
  error?: string;
  /** When the measured run started and ended, epoch ms (to cut a CPU profile to it). */
  startedAt?: number;
  endedAt?: number;
  /** CPU time of all the server's processes over the measured run, ms (user + system, from /proc). */
  cpuMs?: number;
}

export interface MatrixOptions {
  targets: Target[];
  connections: number[];
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  threads: number;
  log: (line: string) => void;
}

function pointOf(target: Target, connections: number, round: number, result: WrkResult): Point {
  const { requestsPerSecond, p50Ms, p90Ms, p99Ms, maxMs, requests, transferPerSec, statuses, walkedSeconds } = result;
  return {
    walkedSeconds,
    target: target.id,
    connections,
    round,
    requestsPerSecond,
    p50Ms,
    p90Ms,
    p99Ms,
    maxMs,
    requests,
    transferPerSec,
    statuses,
  };
}

/**
 * Waits until one request to the target is answered. wrk stops by closing its connections, and the
 * requests still queued (in gunicorn's listen queue, nadir's work gate, MapServer's processes) are
 * worked through all the same: without this, the warm-up's leftovers would eat into the measured
 * run, which at 256 connections on a server doing 50 tiles/s is seconds of work.
 */
async function drain(target: Target): Promise<void> {
  const url = target.drainUrl ?? (target.urls[0] as string);
  const response = await fetch(url, {
    headers: target.headersByUrl?.[url] ?? {},
    signal: AbortSignal.timeout(120_000),
  });
  await response.arrayBuffer();
}

export async function measureOnce(
  target: Target,
  connections: number,
  round: number,
  options: Pick<MatrixOptions, 'seconds' | 'warmupSeconds' | 'threads'> & { once?: boolean },
): Promise<Point> {
  const wrk = (seconds: number) =>
    runWrk({
      urls: target.urls,
      headersByUrl: target.headersByUrl,
      connections,
      threads: options.threads,
      seconds,
      timeoutSeconds: 30,
      once: options.once,
    });
  try {
    await drain(target);
    if (options.warmupSeconds > 0) {
      await wrk(options.warmupSeconds);
      await drain(target);
    }
    const cpuBefore = target.groups && (await sampleCpu(target.groups));
    const startedAt = Date.now();
    const result = await wrk(options.seconds);
    const endedAt = Date.now();
    const cpuMs = target.groups && cpuBefore && cpuBetween(cpuBefore, await sampleCpu(target.groups)).totalMs;
    const point = { ...pointOf(target, connections, round, result), startedAt, endedAt, cpuMs };
    try {
      assertAllStatus(result, target.expect, `${target.name} at ${connections} connections`);
    } catch (error) {
      point.error = (error as Error).message;
    }
    return point;
  } catch (error) {
    const empty = { requestsPerSecond: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, maxMs: 0, requests: 0, transferPerSec: 0 };
    return { target: target.id, connections, round, ...empty, statuses: {}, error: (error as Error).message };
  }
}

export async function runMatrix(options: MatrixOptions): Promise<Point[]> {
  const points: Point[] = [];
  const total = options.rounds * options.connections.length * options.targets.length;
  for (let round = 0; round < options.rounds; round++) {
    for (const connections of options.connections) {
      const shift = round % options.targets.length;
      const order = [...options.targets.slice(shift), ...options.targets.slice(0, shift)];
      for (const target of order) {
        const point = await measureOnce(target, connections, round, options);
        points.push(point);
        const figures = `${point.requestsPerSecond.toFixed(0)}/s p50 ${point.p50Ms.toFixed(1)} p99 ${point.p99Ms.toFixed(1)} ms`;
        options.log(
          `[${points.length}/${total}] round ${round + 1} c${connections} ${target.name}: ${figures}${point.error ? ` FAILED: ${point.error}` : ''}`,
        );
      }
    }
  }
  return points;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function spreadOf(values: number[]): Spread | null {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = sorted.length / 2;
  const median =
    sorted.length % 2
      ? (sorted[Math.floor(mid)] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted.at(-1) as number, n: sorted.length };
}

export interface Summary {
  target: string;
  connections: number;
  rps: Spread | null;
  p50: Spread | null;
  p99: Spread | null;
  /** CPU ms an answer, for targets whose processes were sampled. */
  cpu: Spread | null;
  failed: number;
}

export function summarise(points: Point[], targets: Pick<Target, 'id'>[], connections: number[]): Summary[] {
  return targets.flatMap((target) =>
    connections.map((c) => {
      const runs = points.filter((p) => p.target === target.id && p.connections === c);
      const good = runs.filter((p) => !p.error);
      return {
        target: target.id,
        connections: c,
        rps: spreadOf(good.map((p) => p.requestsPerSecond)),
        p50: spreadOf(good.map((p) => p.p50Ms)),
        p99: spreadOf(good.map((p) => p.p99Ms)),
        cpu: spreadOf(good.flatMap((p) => (p.cpuMs !== undefined && p.requests > 0 ? [p.cpuMs / p.requests] : []))),
        failed: runs.length - good.length,
      };
    }),
  );
}

/** a / b throughput, per round (both runs of the same round and connection count), as a spread. */
export function ratioOf(points: Point[], a: string, b: string, connections: number): Spread | null {
  const rounds = new Set(points.map((p) => p.round));
  const ratios: number[] = [];
  for (const round of rounds) {
    const find = (id: string) =>
      points.find((p) => p.target === id && p.connections === connections && p.round === round && !p.error);
    const x = find(a);
    const y = find(b);
    if (x && y && y.requestsPerSecond > 0) ratios.push(x.requestsPerSecond / y.requestsPerSecond);
  }
  return spreadOf(ratios);
}
