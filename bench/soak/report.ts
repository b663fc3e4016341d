/** The soak's figures as docs/reliability.md's measured section. */
import { MIB } from './process-sample.js';
import type { BurstRaw, IngestCrashRaw, MemoryRaw, ServeCrashRaw, SoakRaw, TrafficRaw } from './raw.js';

const mb = (bytes: number) => `${(bytes / MIB).toFixed(0)} MB`;
const verdict = (met: boolean) => (met ? '**met**' : '**missed**');

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/**
 * RSS by minute: the median of each minute's samples. A sample is a snapshot of whatever renders
 * are in flight (a 2000 px download holds ~60 MB while it runs), so a flat process shows in the
 * minutes' medians, not in its highest sample.
 */
function rssByMinute(t: TrafficRaw): number[] {
  const minutes: number[][] = [];
  for (const s of t.samples) {
    const minute = Math.floor(s.at / 60);
    minutes[minute] = [...(minutes[minute] ?? []), s.rssBytes];
  }
  return minutes.filter((m) => m.length >= 3).map(median);
}

function trafficSection(t: TrafficRaw): string[] {
  const afterFirstMinute = t.samples.filter((s) => s.at >= 60);
  const base = afterFirstMinute[0] ?? t.samples[0];
  const minutes = rssByMinute(t);
  const second = minutes[1] ?? Number.NaN;
  const drift = Math.max(...minutes.slice(1).map((m) => Math.abs(m - second) / second));
  const rss = afterFirstMinute.map((s) => s.rssBytes);
  const fdsEnd = t.samples.at(-1)?.fds ?? 0;
  const fdsMax = Math.max(...afterFirstMinute.map((s) => s.fds));
  const socket = Object.values(t.wrk.socketErrors).reduce((a, b) => a + b, 0);
  const statuses = Object.entries(t.wrk.statuses)
    .sort()
    .map(([code, n]) => `${n.toLocaleString('en')} x ${code}`)
    .join(', ');
  return [
    `### Mixed traffic: ${t.minutes} min at ${t.connections} connections`,
    '',
    `URL list walked round robin by wrk: ${t.mix.tiles} tiles (pass-through jpg, composite jpg and png), ` +
      `${t.mix.coverage} coverage calls, ${t.mix.downloads} TrueOrtho downloads of 500-2000 px.`,
    '',
    '| figure | value | goal |',
    '|---|---|---|',
    `| requests | ${t.wrk.requests.toLocaleString('en')} (${t.wrk.requestsPerSecond.toFixed(0)}/s), p50 ${t.wrk.p50Ms.toFixed(1)} ms, p99 ${t.wrk.p99Ms.toFixed(1)} ms | |`,
    `| answers | ${statuses} | |`,
    `| answers other than 200/304/429/503, socket errors | ${t.unexpected}, ${socket} | 0: ${verdict(t.unexpected === 0 && socket === 0)} |`,
    `| RSS by minute (median of its samples) | ${minutes.map(mb).join(', ')}; after the first minute at most ${(drift * 100).toFixed(1)}% from the second's (samples ${mb(Math.min(...rss))} to ${mb(Math.max(...rss))}) | within 10%: ${verdict(drift <= 0.1)} |`,
    `| open descriptors after the first minute | ${base?.fds} at ${base?.at.toFixed(0)} s, max ${fdsMax}, at the end ${fdsEnd} | no growth: ${verdict(fdsEnd <= (base?.fds ?? 0) + 5)} |`,
    '',
    `RSS and descriptors every 5 s: ${t.samples.map((s) => `${s.at.toFixed(0)} s ${(s.rssBytes / MIB).toFixed(0)} MB/${s.fds}`).join('; ')}.`,
    '',
  ];
}

function burstSection(bursts: BurstRaw[]): string[] {
  const first = bursts[0];
  if (!first) return [];
  return [
    `### Memory after a burst: ${first.downloads} concurrent ${first.size} px TrueOrtho downloads`,
    '',
    'A fresh server, warmed up and idle for 5 s, then the burst, then its RSS every second for 30 s.',
    'Goal: back within 100 MB of the idle RSS within 30 s.',
    '',
    '| allocator | answers | burst | idle RSS | peak RSS | RSS 30 s after | within 100 MB of idle |',
    '|---|---|---|---|---|---|---|',
    ...bursts.map(
      (b) =>
        `| ${b.allocator} | ${JSON.stringify(b.statuses)} | ${b.burstSeconds.toFixed(1)} s | ${mb(b.idleRssBytes)} | ${mb(b.peakRssBytes)} | ` +
        `${mb(b.after.at(-1)?.rssBytes ?? 0)} | ${b.settledSeconds === undefined ? '**missed**' : `after ${b.settledSeconds} s: **met**`} |`,
    ),
    '',
  ];
}

function memorySection(m: MemoryRaw): string[] {
  const limit = 1.5 * 1024 * MIB;
  return [
    '### Ingest memory',
    '',
    'Peak RSS (`/usr/bin/time -v`) of the whole process, under the budget docs/ingest.md describes. Goal: <= 1.5 GB.',
    '',
    '| command | wall time | peak RSS | goal |',
    '|---|---|---|---|',
    `| \`nadir demo\` | ${m.demo.seconds.toFixed(0)} s | ${mb(m.demo.peakRssBytes)} | ${verdict(m.demo.peakRssBytes <= limit)} |`,
    `| \`nadir ingest\` of a ${m.ingest.size.toLocaleString('en')} px RGB source | ${m.ingest.seconds.toFixed(0)} s | ${mb(m.ingest.peakRssBytes)} | ${verdict(m.ingest.peakRssBytes <= limit)} |`,
    '',
  ];
}

function crashSection(ingest: IngestCrashRaw | undefined, serve: ServeCrashRaw | undefined): string[] {
  const lines = ['### Crashes', ''];
  if (ingest) {
    const killed = ingest.attempts.filter((a) => a.outcome === 'killed');
    lines.push(
      `- \`nadir ingest\` of a ${ingest.size.toLocaleString('en')} px RGB source (${ingest.fullIngestSeconds.toFixed(1)} s whole), ` +
        `re-ingested ${ingest.attempts.length} times with a SIGKILL at a random moment up to 1.2 x that ` +
        `(${killed.length} killed, at ${killed.map((a) => (a.killAfterMs / 1000).toFixed(1)).join(', ')} s; the rest finished first). ` +
        'After every one the visible survey was a whole committed version (its COG opens as a COG in GDAL), ' +
        `at most one staging folder existed (the dead attempt's); the last re-run committed v${ingest.finalVersion} and left ` +
        `${ingest.stagingLeft} staging folders: **met**.`,
    );
  }
  if (serve) {
    const billedOnce = serve.transactions === serve.downloadedTokens;
    const lost = serve.tilesServed - serve.tilesCounted;
    const countsOk = lost >= 0 && lost <= serve.tilesAtRisk;
    lines.push(
      `- \`nadir serve\` SIGKILLed ${serve.kills} times while answering tiles and first downloads of ${serve.tokens} ` +
        `transaction tokens, then a clean round and SIGTERM: ${serve.downloadedTokens} tokens downloaded, ` +
        `${serve.transactions} transactions recorded (each token once: ${verdict(billedOnce)}); tiles served ${serve.tilesServed}, ` +
        `counted ${serve.tilesCounted}, lost ${lost}, of ${serve.tilesAtRisk} served in the ${serve.flushSeconds} s flush ` +
        `interval before a kill (never more than served, at most that interval lost: ${verdict(countsOk)}).`,
    );
  }
  return [...lines, ''];
}

export function soakReport(raw: SoakRaw): string {
  const m = raw.machine;
  const carried = Object.entries(raw.carried ?? {});
  return [
    `## Measured: \`npm run soak\` (${raw.date})`,
    '',
    `\`${raw.command}\` on ${m.cpus} cores (${m.model}), ${m.memoryGb.toFixed(0)} GiB; load average ` +
      `${m.loadStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${m.loadEnd.map((l) => l.toFixed(1)).join(' ')} at the end; ` +
      `${(raw.seconds / 60).toFixed(1)} min in all. Raw figures: bench/results/soak-${raw.date}.json.`,
    ...(carried.length > 0
      ? [
          '',
          `Carried over from earlier runs (not measured in this one): ${carried.map(([part, date]) => `${part} (${date})`).join(', ')}; ` +
            "their machine and load are in those runs' results files.",
        ]
      : []),
    '',
    ...(raw.traffic ? trafficSection(raw.traffic) : []),
    ...(raw.bursts ? burstSection(raw.bursts) : []),
    ...(raw.memory ? memorySection(raw.memory) : []),
    ...(raw.ingestCrashes || raw.serveCrashes ? crashSection(raw.ingestCrashes, raw.serveCrashes) : []),
  ].join('\n');
}
