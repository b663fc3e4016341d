/**
 * CPU time of process groups, from /proc (Linux): what a server spent on a run, whatever its
 * processes are (nadir's one, gunicorn's master and workers, nginx with its FastCGI mapservs).
 * Per thread as well: the main thread (a Node process's event loop) apart, the others by name,
 * so nadir's time splits into its event loop and the rest (the libuv pool's file reads, decodes
 * and encodes, V8's garbage collector helpers), which a V8 CPU profile cannot show: it samples the
 * event loop alone, and on a busy machine also counts the time it waited for a core there.
 */
import { readdir, readFile } from 'node:fs/promises';

/** Linux's USER_HZ: the unit of /proc's utime and stime. */
const TICKS_PER_SECOND = 100;

export interface CpuSample {
  /** Milliseconds of user + system time, summed over the groups' live processes and the children they reaped. */
  totalMs: number;
  /** Milliseconds by thread name, live threads only. */
  byThread: Record<string, number>;
}

/** Fields after the command name (which may hold spaces), as /proc/<pid>/stat lists them from field 3. */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function commOf(stat: string): string {
  return stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
}

export async function sampleCpu(groups: number[]): Promise<CpuSample> {
  const wanted = new Set(groups);
  const sample: CpuSample = { totalMs: 0, byThread: {} };
  const ms = (ticks: string | undefined) => (Number(ticks ?? 0) * 1000) / TICKS_PER_SECOND;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const fields = statFields(stat);
    // Field 5 (pgrp) is fields[2]; utime, stime, cutime, cstime are fields 14-17.
    if (!wanted.has(Number(fields[2]))) continue;
    sample.totalMs += ms(fields[11]) + ms(fields[12]) + ms(fields[13]) + ms(fields[14]);
    const tasks = await readdir(`/proc/${entry}/task`).catch(() => [] as string[]);
    for (const task of tasks) {
      const taskStat = await readFile(`/proc/${entry}/task/${task}/stat`, 'utf8').catch(() => '');
      if (!taskStat) continue;
      const taskFields = statFields(taskStat);
      // Node names none of its threads; the one whose id is the process's is the event loop.
      const name = task === entry ? 'main thread' : commOf(taskStat);
      sample.byThread[name] = (sample.byThread[name] ?? 0) + ms(taskFields[11]) + ms(taskFields[12]);
    }
  }
  return sample;
}

/** What was spent between two samples of the same groups. */
export function cpuBetween(before: CpuSample, after: CpuSample): CpuSample {
  const byThread: Record<string, number> = {};
  for (const [name, value] of Object.entries(after.byThread)) byThread[name] = value - (before.byThread[name] ?? 0);
  return { totalMs: after.totalMs - before.totalMs, byThread };
}

/** Milliseconds of user + system time one process (not a group) has spent so far. */
export async function processCpuMs(pid: number): Promise<number> {
  const fields = statFields(await readFile(`/proc/${pid}/stat`, 'utf8'));
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/**
 * Milliseconds of user + system time of `root` and every live process under it, plus what its
 * children that exited have spent: a server that forks its workers (PostgreSQL's backends) as one.
 */
export async function treeCpuMs(root: number): Promise<number> {
  const parents = new Map<number, number>();
  const spent = new Map<number, number>();
  let reaped = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const fields = statFields(stat);
    const pid = Number(entry);
    parents.set(pid, Number(fields[1]));
    spent.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND);
    if (pid === root) reaped = ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
  }
  const under = (pid: number): boolean => {
    for (let at: number | undefined = pid; at !== undefined && at > 1; at = parents.get(at))
      if (at === root) return true;
    return false;
  };
  let total = reaped;
  for (const [pid, ms] of spent) if (under(pid)) total += ms;
  return total;
}
