/** What a running process holds, read from /proc (Linux): resident memory and open descriptors. */
import { readdir, readFile } from 'node:fs/promises';

export interface ProcessSample {
  /** Seconds since the sampling began. */
  at: number;
  rssBytes: number;
  fds: number;
}

export async function sampleProcess(pid: number, at: number): Promise<ProcessSample> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rss = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!rss) throw new Error(`no VmRSS for process ${pid}`);
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  return { at, rssBytes: Number(rss[1]) * 1024, fds };
}

/** Samples `pid` every `everyMs` until `stop()`, which returns the samples. */
export function startSampling(pid: number, everyMs: number): { stop: () => Promise<ProcessSample[]> } {
  const samples: ProcessSample[] = [];
  const started = performance.now();
  let failure: unknown;
  const take = () =>
    sampleProcess(pid, (performance.now() - started) / 1000).then(
      (s) => void samples.push(s),
      (error: unknown) => {
        failure ??= error;
      },
    );
  void take();
  const timer = setInterval(() => void take(), everyMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await take();
      if (failure) throw failure;
      return samples;
    },
  };
}

export const MIB = 2 ** 20;
