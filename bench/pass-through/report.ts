/** The pass-through benchmark's figures as a report Section (run.ts measures them). */
import { formatNumber } from '../report/markdown.js';
import { goal, type Section } from '../report/section.js';
import { type Spread, spread } from '../report/spread.js';
import type { PassThroughPoint, PassThroughRaw, PassThroughTarget } from './raw.js';

const GOAL_THROUGHPUT = 0.75;
const GOAL_CPU = 1.3;

const cpuEach = (p: PassThroughPoint) => (p.requests > 0 ? p.cpu.totalMs / p.requests : Number.NaN);
const good = (raw: PassThroughRaw, target: PassThroughTarget) =>
  raw.points.filter((p) => p.target === target && !p.error);

/** `figure(a) / figure(b)`, round by round (both from the same round), as median and range. */
function perRound(
  raw: PassThroughRaw,
  a: PassThroughTarget,
  b: PassThroughTarget,
  figure: (p: PassThroughPoint) => number,
): Spread {
  const ratios: number[] = [];
  for (const x of good(raw, a)) {
    const y = good(raw, b).find((p) => p.round === x.round);
    if (y) ratios.push(figure(x) / figure(y));
  }
  return spread(ratios);
}

const range = (s: Spread, digits = 2) =>
  `${s.median.toFixed(digits)} (${s.low.toFixed(digits)}-${s.high.toFixed(digits)})`;

export function passThroughSection(raw: PassThroughRaw): Section {
  const rps = (p: PassThroughPoint) => p.requestsPerSecond;
  const throughput = perRound(raw, 'nadir', 'bare', rps);
  const cpu = perRound(raw, 'nadir', 'bare', cpuEach);
  const load = (values: number[]) => values.map((v) => v.toFixed(2)).join(' / ');
  const { settings } = raw;
  const failures = raw.points.filter((p) => p.error).map((p) => `${p.target} round ${p.round + 1}: ${p.error}`);
  return {
    id: 'pass-through',
    title: "Pass-through tiles against node's own limit",
    conditions: [
      `${raw.tiles} stored tiles of the tile benchmark's older survey (median ${formatNumber(raw.medianBytes / 1000)} kB), each answered as stored; wrk -t${settings.threads} -c${settings.connections}, ${settings.seconds} s a run after 1 s of the same load, ${settings.rounds} rounds, the order rotating each round; every answer's status checked (200, or 304 for revalidations).`,
      "One nadir process (`nadir serve`, metrics off unless said, tile cache 256 MB), against bare node:http serving the same bytes from a Map (bench/pass-through/bare-tiles-server.mjs: no routing, no key, two headers), the same bare server sending nadir's whole header block with each tile (built once per tile: what the block's size costs node and the loopback, apart from nadir's work to fill it), bare node:http doing as plainly as it can the work every answer owes under nadir's contract and nothing else (bench/pass-through/bare-owed-server.mjs: the key checked by its SHA-256 digest, a rate limit and the month's usage counted in memory, a new request id, If-None-Match, the same header block with its timings measured; no routing or query validation, no catalogue), and nginx serving the tiles pre-cut from disk with 2 workers. The goals compare with the first.",
      `CPU per answer: user + system time of the server's processes (/proc) during the run, over its answers; it includes the kernel's work on the server's side of the loopback connection. Machine: ${raw.machine.cpus} CPUs (${raw.machine.model}), shared with wrk: load average (1/5/15 min) ${load(raw.machine.loadStart)} at the start, ${load(raw.machine.loadEnd)} at the end. Node ${raw.node}.`,
    ],
    goals: [
      goal(
        "Pass-through, one process: nadir's tiles/s ÷ bare node:http's (same round)",
        throughput.median,
        GOAL_THROUGHPUT,
        'x',
        'min',
      ),
      goal("Pass-through: nadir's CPU per answer ÷ bare node:http's (same round)", cpu.median, GOAL_CPU, 'x', 'max'),
    ],
    tables: [
      {
        caption:
          'Tiles per second and CPU per answer (median over rounds, min-max), and each against bare node:http in the same round',
        columns: [
          'server',
          'tiles/s',
          'CPU ms an answer',
          'event loop share',
          'p99 ms',
          'tiles/s ÷ bare',
          'CPU ÷ bare',
        ],
        rows: raw.targets.map(({ id, name }) => {
          const points = good(raw, id);
          const mainShare = spread(points.map((p) => (p.cpu.byThread['main thread'] ?? Number.NaN) / p.cpu.totalMs));
          return [
            name,
            range(spread(points.map(rps)), 0),
            range(spread(points.map(cpuEach)), 4),
            id === 'nginx' ? null : `${Math.round(mainShare.median * 100)}%`,
            formatNumber(spread(points.map((p) => p.p99Ms)).median),
            id === 'bare' ? null : range(perRound(raw, id, 'bare', rps)),
            id === 'bare' ? null : range(perRound(raw, id, 'bare', cpuEach)),
          ];
        }),
        notes: [
          "The event loop share is the main thread's part of the process's CPU; the rest is libuv's pool, V8's helpers and the kernel's work charged to other threads.",
          'A slower server also pays more kernel time per answer on this VM: wrk sleeps between its answers, and waking it is charged to the sender (docs/tiles.md, "Pass-through against bare node").',
        ],
      },
    ],
    charts: [],
    findings: [
      `What the contract itself costs: the bare server doing what every answer owes used ${range(perRound(raw, 'bare-owed', 'bare', cpuEach))}x bare node's CPU per answer, nadir ${range(cpu)}x; nadir ÷ that floor ${range(perRound(raw, 'nadir', 'bare-owed', cpuEach))}x (same rounds).`,
      'bench/pass-through/profile.ts profiles one nadir process under the same load (`--cpu-prof`): where the event loop spends a pass-through answer, by function and by origin.',
      "bench/pass-through/by-binary.ts runs each server alone on one core and wrk on the other, and splits an answer's CPU by binary with `perf` (kernel, node's binary, JIT code, C libraries): steadier than this table between runs; its figures and what they say are in docs/tiles.md.",
    ],
    failures,
    raw,
  };
}
