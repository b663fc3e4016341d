/**
 * Peak memory of a whole process tree, for commands that fork workers (`nadir ingest --workers N`):
 * `/usr/bin/time -v` reports one figure, the largest single process it waited for, which says
 * neither what each worker peaked at nor what the tree held at once.
 *
 * Every `intervalMs` (200 ms) the sampler reads the parent link of every process (`/proc/<pid>/stat`),
 * takes the descendants of the root (a process once seen stays tracked by pid and start time, even
 * if its parent exits first and it is re-parented), and reads each one's `VmHWM` (its own peak RSS,
 * kept by the kernel, so a peak between two samples is not missed while the process lives) and
 * `VmRSS` (now) from `/proc/<pid>/status`. A process that lives less than one interval, or grows in
 * its last interval, may be missed or under-counted.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessPeak {
  pid: number;
  /** Depth below the root: 1 is the root's own child (for `/usr/bin/time cmd`, `cmd`). */
  depth: number;
  /** argv joined by spaces (paths as given), cut at 200 characters. */
  command: string;
  /** The largest VmHWM seen (the process's peak resident set), bytes. */
  peakRssBytes: number;
  /** How long the sampler saw it, ms. */
  seenMs: number;
}

export interface TreeMemory {
  intervalMs: number;
  samples: number;
  processes: ProcessPeak[];
  /** The largest sum of VmRSS over the tree at one sample: what the tree held at once, bytes. */
  peakTotalRssBytes: number;
  /** The sum of every process's own peak (an upper bound on the total; peaks need not coincide). */
  sumOfPeaksBytes: number;
}

interface Tracked {
  pid: number;
  start: string;
  depth: number;
  command: string;
  peak: number;
  first: number;
  last: number;
}

/** Parent pid and start time (clock ticks since boot) from /proc/<pid>/stat; the name may hold ')'. */
function statOf(pid: string): { ppid: number; start: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // After the name: state(3) ppid(4) ... starttime(22), so index 1 and 19 of what follows.
    return { ppid: Number(fields[1]), start: fields[19] ?? '' };
  } catch {
    return undefined;
  }
}

function memoryOf(pid: number): { hwm: number; rss: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(status);
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
    if (!hwm || !rss) return undefined; // a zombie has no memory lines
    return { hwm: Number(hwm[1]) * 1024, rss: Number(rss[1]) * 1024 };
  } catch {
    return undefined;
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 200);
  } catch {
    return '';
  }
}

export class ProcessTreeSampler {
  private readonly tracked = new Map<string, Tracked>();
  private readonly timer: NodeJS.Timeout;
  private samples = 0;
  private peakTotal = 0;
  private readonly started = performance.now();

  constructor(
    private readonly rootPid: number,
    readonly intervalMs = 200,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  /** One pass over /proc: synchronous, a few milliseconds for a few hundred processes. */
  sample(): void {
    const now = performance.now() - this.started;
    const parents = new Map<number, number>();
    const starts = new Map<number, string>();
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const stat = statOf(name);
      if (!stat) continue;
      parents.set(Number(name), stat.ppid);
      starts.set(Number(name), stat.start);
    }
    // Depth below the root by walking parent links (a tree of a few processes: short walks).
    const depthOf = (pid: number): number | undefined => {
      let depth = 0;
      for (let p: number | undefined = pid; p !== undefined && p > 1 && depth < 64; p = parents.get(p)) {
        if (p === this.rootPid) return depth;
        depth++;
      }
      return undefined;
    };
    let total = 0;
    for (const [pid, start] of starts) {
      const key = `${pid}:${start}`;
      let entry = this.tracked.get(key);
      if (!entry) {
        const depth = depthOf(pid);
        if (depth === undefined || depth === 0) continue;
        entry = { pid, start, depth, command: commandOf(pid), peak: 0, first: now, last: now };
        this.tracked.set(key, entry);
      }
      const memory = memoryOf(pid);
      if (!memory) continue;
      entry.peak = Math.max(entry.peak, memory.hwm);
      entry.last = now;
      total += memory.rss;
    }
    this.samples++;
    this.peakTotal = Math.max(this.peakTotal, total);
  }

  stop(): TreeMemory {
    clearInterval(this.timer);
    const processes = [...this.tracked.values()]
      .filter((t) => t.peak > 0)
      .map((t) => ({
        pid: t.pid,
        depth: t.depth,
        command: t.command,
        peakRssBytes: t.peak,
        seenMs: Math.round(t.last - t.first),
      }));
    return {
      intervalMs: this.intervalMs,
      samples: this.samples,
      processes,
      peakTotalRssBytes: this.peakTotal,
      sumOfPeaksBytes: processes.reduce((s, p) => s + p.peakRssBytes, 0),
    };
  }
}
