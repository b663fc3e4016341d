/** The metrics part's figures as a report Section: CPU per answer with Prometheus metrics off and on. */
import { goal, type Section, type Table } from '../report/section.js';
import type { MetricsRaw, MetricsRound } from './raw.js';

/** The issue's budget: metrics on may cost at most this much more CPU per answer. */
const BUDGET_PERCENT = 3;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/**
 * The extra CPU per answer with metrics on, %: the median over rounds of each round's on/off ratio.
 * A ratio within a round compares two runs minutes apart at most, so the machine's load drifting
 * between rounds cancels out.
 */
export function overheadPercent(rounds: MetricsRound[], which: 'on' | 'control' = 'on'): number {
  return (median(rounds.map((r) => r[which].cpuMsPerAnswer / r.off.cpuMsPerAnswer)) - 1) * 100;
}

/** Older results files have no control server. */
const controlled = (rounds: MetricsRound[]) => rounds.every((r) => r.control !== undefined);

function costTable(raw: MetricsRaw): Table {
  return {
    caption: 'CPU time of the server per answer, metrics off and on (medians over rounds)',
    columns: [
      'answers',
      'off µs CPU',
      'on µs CPU',
      'on: extra %',
      'control: extra %',
      'on, per round %',
      'off /s',
      'on /s',
    ],
    rows: raw.kinds.map(({ kind, rounds }) => [
      kind,
      median(rounds.map((r) => r.off.cpuMsPerAnswer)) * 1000,
      median(rounds.map((r) => r.on.cpuMsPerAnswer)) * 1000,
      overheadPercent(rounds),
      controlled(rounds) ? overheadPercent(rounds, 'control') : null,
      rounds.map((r) => ((r.on.cpuMsPerAnswer / r.off.cpuMsPerAnswer - 1) * 100).toFixed(1)).join(', '),
      median(rounds.map((r) => r.off.requestsPerSecond)),
      median(rounds.map((r) => r.on.requestsPerSecond)),
    ]),
    notes: [
      "extra %: the median of the rounds' ratios of CPU per answer to the metrics-off server's, minus one; per round: each round's. The control is a second server with metrics off: its extra % is what two equal servers differ by on this machine, the resolution of the comparison. Answers per second are on this shared machine, for scale only.",
      `Counted: ${raw.counted.map((c) => `${c.kind} ${c.counted} in nadir_http_requests_total, ${c.answered} answers seen by wrk (runs stop with up to ${raw.settings.connections} requests in flight)`).join('; ')}.`,
    ],
  };
}

function seamTable(raw: MetricsRaw): Table {
  const { httpNs, tileObserverNs } = raw.seams;
  const offUs = (kind: string) => {
    const rounds = raw.kinds.find((k) => k.kind === kind)?.rounds ?? [];
    return rounds.length ? median(rounds.map((r) => r.off.cpuMsPerAnswer)) * 1000 : null;
  };
  const row = (kind: string, ns: number) => {
    const off = offUs(kind);
    return [kind, ns, off === null ? null : (ns / 1000 / off) * 100];
  };
  return {
    caption: 'The recording itself, per answer, timed in one process (bench/metrics/seams.ts)',
    columns: ['answers', 'ns added', '% of the CPU per answer with metrics off'],
    rows: [row('pass-through tiles', httpNs + tileObserverNs), row('coverage', httpNs)],
    notes: [
      `HTTP entrance ${httpNs.toFixed(0)} ns (clock read, 'finish' listener, two Map lookups, a counter and a histogram), tile core's observer ${tileObserverNs.toFixed(0)} ns; the best of 7 timed batches of the compiled code. Besides these, prom-client's process metrics sample in the background (event-loop delay, GC), a cost per second, not per answer.`,
    ],
  };
}

export function metricsSection(raw: MetricsRaw): Section {
  const { settings } = raw;
  return {
    id: 'metrics',
    title: 'What Prometheus metrics cost',
    conditions: [
      `${raw.machine.cpus} cores (${raw.machine.model}); load ${raw.machine.loadStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${raw.machine.loadEnd.map((l) => l.toFixed(1)).join(' ')} at the end.`,
      `Three \`nadir serve\` processes on the same data: one with NADIR_METRICS_PORT (metrics on), two without (off, and the control); wrk with ${settings.connections} connections, ${settings.warmupSeconds} s of warm-up then ${settings.seconds} s measured per server per round, ${settings.rounds} rounds, the servers in turns, each first, second and third as often. /metrics scraped every ${settings.scrapeEverySeconds} s while metrics are on.`,
      ...raw.kinds.map((k) => `${k.kind}: ${k.request}.`),
      `Measured in ${(raw.seconds / 60).toFixed(1)} min.`,
    ],
    goals: raw.kinds.map((k) =>
      goal(`extra CPU per ${k.kind} answer with metrics on`, overheadPercent(k.rounds), BUDGET_PERCENT, '%', 'max'),
    ),
    tables: [costTable(raw), seamTable(raw)],
    charts: [],
    findings: [
      'Every answer is counted once, where every request passes (the node:http handler, before the tile and coverage lanes), when its response finishes: one clock read, one shared listener, two Map lookups and a few additions (src/metrics/http-metrics.ts; series.ts counts without prom-client, whose label hashing on every inc() alone cost several per cent of a pass-through tile). Tile outcomes are told by the tile core to an observer, synchronously (no promise step); rate-limit decisions are timed only with Redis.',
      'On this shared machine (two cores, other test suites running) two equal servers, off and the control, differ by several per cent in a run (the control column) and by tens of per cent in a round: more than the 3 % budget, so the HTTP comparison cannot resolve it either way. The in-process figure of the recording (the second table, about 0.2 µs of some 60 to 100 µs) is the one that does.',
    ],
    raw,
  };
}
