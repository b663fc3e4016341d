/**
 * A summary of V8 CPU profiles (`node --cpu-prof`): self time per function and per origin (nadir,
 * fastify, Node's internals, the garbage collector, ...), all processes of one run added up. Self
 * time is where the CPU was when sampled, so it names what bounds a figure; time inside native code
 * called from JavaScript (sharp's encode on another thread is not in here at all) shows as the
 * calling function's or as "(program)".
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileEntry {
  name: string;
  where: string;
  ms: number;
  /** Share of the busy (non-idle) samples. */
  share: number;
}

export interface ProfileSummary {
  files: number;
  /** Wall time profiled, summed over processes, ms. */
  wallMs: number;
  /** Time not idle, summed over processes, ms. */
  busyMs: number;
  functions: ProfileEntry[];
  origins: ProfileEntry[];
}

/** The part of a script URL a reader recognises: `dist/tiles/cog-tiles.js`, `fastify/lib/reply.js`, `node:net`. */
function shortUrl(url: string): string {
  if (!url) return '';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

function originOf(name: string, url: string): string {
  // V8's own entries: (garbage collector), (program), (root). An (anonymous) function has a script.
  if (name.startsWith('(') && !url) return name;
  if (url.startsWith('node:')) return 'Node.js internals';
  if (url.includes('/dist/')) return 'nadir';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1] as string;
  return url ? 'other' : 'native bindings (sockets, files, ...)';
}

/**
 * `window`: only samples this many ms after the earliest profile's start (V8's clock is monotonic
 * and shared by the processes of one machine, so cluster workers line up with their primary).
 */
export async function summariseProfiles(
  dir: string,
  top = 15,
  window?: { fromMs: number; toMs: number },
): Promise<ProfileSummary> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  const profiles = await Promise.all(
    files.map(async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as CpuProfile),
  );
  const origin = Math.min(...profiles.map((p) => p.startTime));
  const byFunction = new Map<string, { name: string; where: string; ms: number }>();
  const byOrigin = new Map<string, number>();
  let wallMs = 0;
  let idleMs = 0;
  for (const profile of profiles) {
    const from = origin + (window?.fromMs ?? Number.NEGATIVE_INFINITY) * 1000;
    const to = origin + (window?.toMs ?? Number.POSITIVE_INFINITY) * 1000;
    wallMs += (Math.min(to, profile.endTime) - Math.max(from, profile.startTime)) / 1000;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
    let at = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      const frame = nodes.get(profile.samples[i] as number);
      const ms = (profile.timeDeltas[i] ?? 0) / 1000;
      at += profile.timeDeltas[i] ?? 0;
      if (!frame || at < from || at > to) continue;
      const name = frame.functionName || '(anonymous)';
      if (name === '(idle)') {
        idleMs += ms;
        continue;
      }
      const where = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
      const key = `${name}@${where}`;
      const entry = byFunction.get(key) ?? { name, where, ms: 0 };
      entry.ms += ms;
      byFunction.set(key, entry);
      const origin = originOf(name, frame.url);
      byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + ms);
    }
  }
  const busyMs = wallMs - idleMs;
  const share = (ms: number) => (busyMs > 0 ? ms / busyMs : 0);
  const functions = [...byFunction.values()]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, top)
    .map((e) => ({ ...e, share: share(e.ms) }));
  const origins = [...byOrigin.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => ({ name, where: '', ms, share: share(ms) }));
  return { files: files.length, wallMs, busyMs, functions, origins };
}

export function formatProfile(label: string, summary: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(6);
  const lines = [
    `${label}: ${summary.files} profile(s), busy ${(summary.busyMs / 1000).toFixed(1)} s of ${(summary.wallMs / 1000).toFixed(1)} s`,
    `  by origin: ${summary.origins.map((o) => `${o.name} ${pct(o.share).trim()}`).join(', ')}`,
    ...summary.functions.map((f) => `  ${pct(f.share)}  ${f.name}  ${f.where}`),
  ];
  return lines.join('\n');
}
