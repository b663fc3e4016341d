/**
 * Where a pass-through answer's CPU goes, by binary: the kernel, node's own binary (V8's builtins
 * and runtime, the garbage collector, node's C++), JIT-compiled JavaScript, and the C libraries.
 * Each server runs alone on core 0 and wrk on core 1, so the server's core is busy only with its
 * answers, and `perf` samples the server's process while wrk loads it (servers and rounds taken
 * in turn). The benchmark's figure (/proc's CPU per answer, both cores shared) moves by 10-20%
 * between runs on this VM, mostly in the kernel's share; the user-space share measured this way
 * moves by about 5%, so a change of half a microsecond in a server's own work shows.
 *   node --import tsx bench/pass-through/by-binary.ts [rounds] [seconds]
 * Needs `perf` (linux-perf) and root or perf_event_paranoid <= 1; 2 cores or more.
 */
import { execFile } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { removeScratch, type Service, scratchDir, withGroups } from '../load/processes.js';
import { runWrk } from '../load/wrk.js';
import { median } from '../raster/measure.js';
import { tileData, WORK } from '../tiles/data.js';
import { startNadir } from '../tiles/servers.js';
import { findTileLists, nadirTileUrl } from '../tiles/tile-lists.js';
import { nadirHeaderBlock, owedWork, startBare } from './run.js';

const run = promisify(execFile);
const rounds = Number(process.argv[2] ?? 3);
const seconds = Number(process.argv[3] ?? 5);
const SAMPLES_A_SECOND = 2999;
const log = (line: string) => process.stderr.write(`${line}\n`);

type Part = 'kernel' | 'node' | 'jit' | 'libraries';
const PARTS: Part[] = ['kernel', 'node', 'jit', 'libraries'];

/** perf's dso names: the kernel, node's binary, C libraries; the rest is code V8 made at run time. */
function partOf(dso: string): Part {
  if (dso.startsWith('[kernel')) return 'kernel';
  if (dso === 'node') return 'node';
  if (/^(lib|ld-linux|\[vdso\])/.test(dso)) return 'libraries';
  return 'jit';
}

/** Pins every thread of the groups' processes to `core`; answers the processes. */
async function pinned(groups: number[], core: number): Promise<string[]> {
  const pids: string[] = [];
  for (const group of groups) {
    const { stdout } = await run('pgrep', ['-g', `${group}`]);
    pids.push(...stdout.trim().split('\n').filter(Boolean));
  }
  for (const pid of pids) await run('taskset', ['-a', '-pc', `${core}`, pid]);
  return pids;
}

/** Microseconds a request by part, from perf's samples of `pid` while wrk loads it. */
async function measure(pid: number, urls: string[], dir: string): Promise<Record<Part, number> & { requests: number }> {
  await runWrk({ urls, connections: 64, threads: 2, seconds: 2 });
  const file = join(dir, 'perf.data');
  const recording = run('perf', [
    'record',
    '-F',
    `${SAMPLES_A_SECOND}`,
    '-p',
    `${pid}`,
    '-o',
    file,
    '--',
    'sleep',
    `${seconds}`,
  ]);
  const load = await runWrk({ urls, connections: 64, threads: 2, seconds });
  await recording;
  if (Object.keys(load.statuses).some((status) => status !== '200'))
    throw new Error(`not all 200: ${JSON.stringify(load.statuses)}`);
  const { stdout } = await run('perf', ['report', '-i', file, '--sort', 'dso', '-q', '--stdio', '-n', '-g', 'none'], {
    maxBuffer: 1 << 24,
  });
  const parts: Record<Part, number> = { kernel: 0, node: 0, jit: 0, libraries: 0 };
  for (const line of stdout.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 3 || !fields[0]?.endsWith('%')) continue;
    parts[partOf(fields.slice(2).join(' '))] += Number(fields[1]);
  }
  const us = (samples: number) => (samples / SAMPLES_A_SECOND / load.requests) * 1e6;
  return {
    kernel: us(parts.kernel),
    node: us(parts.node),
    jit: us(parts.jit),
    libraries: us(parts.libraries),
    requests: load.requests,
  };
}

if (cpus().length < 2) throw new Error('needs 2 cores: the server on one, wrk on the other');
await run('perf', ['--version']).catch(() => {
  throw new Error('needs `perf` (Debian: apt-get install linux-perf)');
});
const data = await tileData({ fresh: false, log });
const precut = join(WORK, 'pass-through-precut');
const dir = await scratchDir('pass-through-by-binary');
const services: Service[] = [];
try {
  const start = async <T extends Service>(begin: () => Promise<T>) => {
    const { started, groups } = await withGroups(begin);
    services.push(started);
    // The group's one node process (nadir serve with one worker is one process).
    const pids = await pinned(groups, 0);
    if (pids.length !== 1) throw new Error(`expected one process, found ${pids.length}`);
    return { service: started, pid: Number(pids[0]) };
  };
  const nadir = await start(() => startNadir({ dataDir: data.dataDir, tileCacheMb: 256, workers: '1' }));
  const lists = await findTileLists(nadir.service.url, data, precut, 200);
  const urlsOf = (base: string) => lists.passThrough.map((t) => nadirTileUrl(base, data.apiKey, t, 'jpg'));
  const block = await nadirHeaderBlock(urlsOf(nadir.service.url)[0] as string);
  const bare = await start(() => startBare('bare-tiles-server.mjs', precut));
  const bareHeaders = await start(() => startBare('bare-tiles-server.mjs', precut, block));
  const bareOwed = await start(() =>
    startBare('bare-owed-server.mjs', precut, owedWork(block, data.apiKey, lists.etags)),
  );
  await run('taskset', ['-a', '-pc', '1', `${process.pid}`]);
  const targets = [
    { name: 'bare node:http', running: bare },
    { name: "bare, nadir's header block", running: bareHeaders },
    { name: 'bare, what every answer owes', running: bareOwed },
    { name: 'nadir pass-through', running: nadir },
  ];
  const figures = new Map<string, Record<Part, number>[]>();
  for (let round = 0; round < rounds; round++) {
    const shift = round % targets.length;
    for (const target of [...targets.slice(shift), ...targets.slice(0, shift)]) {
      const figure = await measure(target.running.pid, urlsOf(target.running.service.url), dir);
      figures.set(target.name, [...(figures.get(target.name) ?? []), figure]);
      const user = figure.node + figure.jit + figure.libraries;
      log(
        `round ${round + 1} ${target.name}: kernel ${figure.kernel.toFixed(2)} us, user ${user.toFixed(2)} us an answer`,
      );
    }
  }
  const medianOf = (name: string, pick: (figure: Record<Part, number>) => number) =>
    median((figures.get(name) ?? []).map(pick));
  const userOf = (figure: Record<Part, number>) => figure.node + figure.jit + figure.libraries;
  const totalOf = (figure: Record<Part, number>) => userOf(figure) + figure.kernel;
  const bareUser = medianOf('bare node:http', userOf);
  const bareTotal = medianOf('bare node:http', totalOf);
  console.log(
    `\nMicroseconds of CPU an answer, server alone on core 0, wrk on core 1 (median of ${rounds} rounds of ${seconds} s):\n`,
  );
  console.log('| server | kernel | node binary | JIT code | C libraries | user space | user ÷ bare | total ÷ bare |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const { name } of targets) {
    const cells = PARTS.map((part) => medianOf(name, (figure) => figure[part]).toFixed(2));
    const user = medianOf(name, userOf);
    const total = medianOf(name, totalOf);
    console.log(
      `| ${name} | ${cells.join(' | ')} | ${user.toFixed(2)} | ${(user / bareUser).toFixed(2)} | ${(total / bareTotal).toFixed(2)} |`,
    );
  }
} finally {
  for (const service of services.reverse()) await service.stop();
  await removeScratch(dir);
}
