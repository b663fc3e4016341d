/** The tile section's charts: throughput and p99 by connections, and the nadir / peer ratios. */
import type { Chart } from '../report/section.js';
import type { View } from './view.js';

/** Reference lines (ceilings) are drawn dashed. */
const CEILINGS = new Set(['nginx', 'bare-node']);
/** The pass-through tiles with their ceilings and single-COG renders; the rest are composites. */
const PASS_GROUP = new Set([
  'nadir-pass',
  'nadir-pass-cluster',
  'nadir-304',
  'nginx',
  'bare-node',
  'rasterio',
  'mapserver',
]);
/** Bar labels: nadir's path / the peer. */
const SHORT: Record<string, string> = {
  'nadir-pass': 'pass',
  'nadir-pass-cluster': 'pass, workers',
  'nadir-jpg-cluster': 'jpg, workers',
  'nadir-png-cluster': 'png, workers',
  'nadir-jpg': 'jpg',
  'nadir-png': 'png',
  nginx: 'nginx',
  'bare-node': 'bare Node',
  rasterio: 'rasterio',
  mapserver: 'MapServer',
  'rasterio-jpg': 'rasterio',
  'rasterio-png': 'rasterio',
  'mapserver-jpg': 'MapServer',
  'mapserver-png': 'MapServer',
};

function lineChart(view: View, file: string, title: string, metric: 'rps' | 'p99', pass: boolean): Chart {
  return {
    kind: 'line',
    file,
    title,
    xLabel: 'connections (wrk, keep-alive)',
    yLabel: metric === 'rps' ? 'tiles/s (log)' : 'p99 ms (log)',
    xLog: true,
    yLog: true,
    series: view.targets
      .filter((t) => PASS_GROUP.has(t.id) === pass)
      .map((t) => ({
        name: t.name,
        dashed: CEILINGS.has(t.id),
        points: view.connections.flatMap((c) => {
          const s = view.at(t.id, c)?.[metric];
          return s ? [{ x: c, y: s.median, low: s.min, high: s.max }] : [];
        }),
      })),
  };
}

export function tileCharts(view: View): Chart[] {
  return [
    lineChart(view, 'tiles-throughput-pass.png', 'Pass-through tiles per second, with the ceilings', 'rps', true),
    {
      ...lineChart(view, 'tiles-throughput-composite.png', 'Composite tiles per second (two surveys)', 'rps', false),
      references: [
        { value: 1000, label: 'goal: jpg 1,000/s' },
        { value: 500, label: 'goal: png 500/s' },
      ],
    },
    lineChart(view, 'tiles-p99-pass.png', 'Pass-through tiles: p99 latency', 'p99', true),
    {
      ...lineChart(view, 'tiles-p99-composite.png', 'Composite tiles: p99 latency', 'p99', false),
      references: [{ value: 50, label: 'goal: p99 50 ms' }],
    },
    {
      kind: 'bar',
      file: 'tiles-ratios.png',
      title: 'nadir / peer, tiles per second',
      xLabel: "nadir's pass-through (pass) and composite (jpg, png) tiles / the peer's",
      yLabel: 'ratio (log)',
      yLog: true,
      categories: view.pairs.map(([a, b]) => `${SHORT[a]} / ${SHORT[b]}`),
      series: view.connections.map((c) => {
        const spreads = view.pairs.map(([a, b]) => view.ratio(a, b, c));
        return {
          name: `${c} connections`,
          values: spreads.map((s) => s?.median ?? null),
          low: spreads.map((s) => s?.min ?? null),
          high: spreads.map((s) => s?.max ?? null),
        };
      }),
      references: [{ value: 1, label: 'parity' }],
    },
  ];
}
