/**
 * Line and bar charts as SVG strings, turned into PNG by sharp (librsvg), so the report draws its
 * own pictures with what nadir already depends on. Deliberately plain: axes, ticks, a legend,
 * min-max bars where a point has a spread. Text needs a sans-serif font (Debian: fonts-dejavu-core).
 */
import { join } from 'node:path';
import sharp from 'sharp';
import type { BarChart, Chart, LineChart, Reference } from './section.js';

const WIDTH = 900;
const HEIGHT = 500;
const MARGIN = { left: 80, right: 250, top: 50, bottom: 70 };
const PLOT = { width: WIDTH - MARGIN.left - MARGIN.right, height: HEIGHT - MARGIN.top - MARGIN.bottom };
/** Distinguishable colours (Okabe-Ito, then a few more). */
const COLOURS = [
  '#0072B2',
  '#D55E00',
  '#009E73',
  '#CC79A7',
  '#E69F00',
  '#56B4E9',
  '#000000',
  '#999999',
  '#F0E442',
  '#882255',
];

const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function formatTick(value: number): string {
  if (value === 0) return '0';
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${+(value / 1e6).toPrecision(3)}M`;
  if (abs >= 1e4) return `${+(value / 1e3).toPrecision(3)}k`;
  if (abs >= 1) return `${+value.toPrecision(4)}`.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${+value.toPrecision(2)}`;
}

interface Scale {
  at(value: number): number;
  ticks: number[];
}

function linearScale(min: number, max: number, length: number, flip: boolean): Scale {
  const lo = Math.min(0, min);
  const span = max > lo ? max - lo : 1;
  const step = 10 ** Math.floor(Math.log10(span / 5));
  const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => span / s <= 6) ?? step * 10;
  const top = Math.ceil(max / nice) * nice || nice;
  const ticks: number[] = [];
  for (let v = Math.floor(lo / nice) * nice; v <= top + nice / 2; v += nice) ticks.push(+v.toPrecision(12));
  const at = (v: number) => ((v - (ticks[0] as number)) / (top - (ticks[0] as number))) * length;
  return { at: flip ? (v) => length - at(v) : at, ticks };
}

function logScale(min: number, max: number, length: number, flip: boolean, ticksAt?: number[]): Scale {
  const lo = 10 ** Math.floor(Math.log10(Math.max(min, 1e-9)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(max, lo * 10)));
  const decades = Math.log10(hi / lo);
  const ticks: number[] = ticksAt ?? [];
  if (!ticksAt) {
    const multiples = decades <= 2 ? [1, 2, 5] : [1];
    for (let d = lo; d <= hi * 1.001; d *= 10) for (const m of multiples) if (d * m <= hi * 1.001) ticks.push(d * m);
  }
  const at = (v: number) => (Math.log10(Math.max(v, lo) / lo) / decades) * length;
  return { at: flip ? (v) => length - at(v) : at, ticks };
}

function frame(title: string, xLabel: string, yLabel: string, body: string[]): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="DejaVu Sans, sans-serif">
<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>
<text x="${WIDTH / 2 - MARGIN.right / 2}" y="28" font-size="18" text-anchor="middle" font-weight="bold">${xml(title)}</text>
<text x="${MARGIN.left + PLOT.width / 2}" y="${HEIGHT - 15}" font-size="14" text-anchor="middle">${xml(xLabel)}</text>
<text transform="translate(20 ${MARGIN.top + PLOT.height / 2}) rotate(-90)" font-size="14" text-anchor="middle">${xml(yLabel)}</text>
<g transform="translate(${MARGIN.left} ${MARGIN.top})">
${body.join('\n')}
</g>
</svg>`;
}

function yAxis(scale: Scale): string[] {
  return scale.ticks.flatMap((t) => {
    const y = scale.at(t).toFixed(1);
    return [
      `<line x1="0" x2="${PLOT.width}" y1="${y}" y2="${y}" stroke="#e4e4e4"/>`,
      `<text x="-8" y="${y}" font-size="12" text-anchor="end" dominant-baseline="middle">${formatTick(t)}</text>`,
    ];
  });
}

function legend(entries: { name: string; colour: string; dashed?: boolean; bar?: boolean }[]): string[] {
  return entries.flatMap((e, i) => {
    const y = 10 + i * 22;
    const x = PLOT.width + 20;
    const mark = e.bar
      ? `<rect x="${x}" y="${y - 6}" width="24" height="12" fill="${e.colour}"/>`
      : `<line x1="${x}" x2="${x + 24}" y1="${y}" y2="${y}" stroke="${e.colour}" stroke-width="3"${e.dashed ? ' stroke-dasharray="6 4"' : ''}/>`;
    return [mark, `<text x="${x + 32}" y="${y}" font-size="12" dominant-baseline="middle">${xml(e.name)}</text>`];
  });
}

function references(lines: Reference[] | undefined, y: Scale): string[] {
  return (lines ?? []).flatMap((line) => {
    const py = y.at(line.value);
    if (!(py >= 0 && py <= PLOT.height)) return [];
    return [
      `<line x1="0" x2="${PLOT.width}" y1="${py.toFixed(1)}" y2="${py.toFixed(1)}" stroke="#c00" stroke-dasharray="2 3"/>`,
      `<text x="${PLOT.width - 4}" y="${(py - 5).toFixed(1)}" font-size="12" fill="#c00" text-anchor="end">${xml(line.label)}</text>`,
    ];
  });
}

const axes = `<rect x="0" y="0" width="${PLOT.width}" height="${PLOT.height}" fill="none" stroke="#888"/>`;

export function lineChartSvg(chart: LineChart): string {
  const points = chart.series.flatMap((s) => s.points);
  const xs = points.map((p) => p.x);
  const ys = [
    ...points.flatMap((p) => [p.y, p.low ?? p.y, p.high ?? p.y]),
    ...(chart.references ?? []).map((r) => r.value),
  ].filter((v) => Number.isFinite(v));
  const xValues = [...new Set(xs)].sort((a, b) => a - b);
  const x = chart.xLog
    ? logScale(Math.min(...xs), Math.max(...xs), PLOT.width, false, xValues)
    : linearScale(Math.min(...xs), Math.max(...xs), PLOT.width, false);
  // Data ticks on a log x axis: the plot spans exactly the values measured.
  const xAt = chart.xLog
    ? (v: number) =>
        xValues.length < 2
          ? PLOT.width / 2
          : (Math.log(v / (xValues[0] as number)) / Math.log((xValues.at(-1) as number) / (xValues[0] as number))) *
            PLOT.width
    : x.at;
  const y = chart.yLog
    ? logScale(Math.min(...ys), Math.max(...ys), PLOT.height, true)
    : linearScale(Math.min(...ys), Math.max(...ys), PLOT.height, true);
  const body = [...yAxis(y), axes];
  for (const t of x.ticks) {
    const px = xAt(t).toFixed(1);
    body.push(`<line x1="${px}" x2="${px}" y1="${PLOT.height}" y2="${PLOT.height + 5}" stroke="#888"/>`);
    body.push(`<text x="${px}" y="${PLOT.height + 20}" font-size="12" text-anchor="middle">${formatTick(t)}</text>`);
  }
  chart.series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length] as string;
    const valid = s.points.filter((p) => Number.isFinite(p.y));
    const path = valid.map((p, j) => `${j ? 'L' : 'M'}${xAt(p.x).toFixed(1)},${y.at(p.y).toFixed(1)}`).join(' ');
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    body.push(`<path d="${path}" fill="none" stroke="${colour}" stroke-width="2.5"${dash}/>`);
    for (const p of valid) {
      const px = xAt(p.x);
      body.push(`<circle cx="${px.toFixed(1)}" cy="${y.at(p.y).toFixed(1)}" r="3.5" fill="${colour}"/>`);
      if (p.low !== undefined && p.high !== undefined && p.high > p.low) {
        const [a, b] = [y.at(p.low).toFixed(1), y.at(p.high).toFixed(1)];
        body.push(
          `<path d="M${px - 4},${a} H${px + 4} M${px},${a} V${b} M${px - 4},${b} H${px + 4}" stroke="${colour}"/>`,
        );
      }
    }
  });
  body.push(...references(chart.references, y));
  body.push(
    ...legend(
      chart.series.map((s, i) => ({ name: s.name, colour: COLOURS[i % COLOURS.length] as string, dashed: s.dashed })),
    ),
  );
  return frame(chart.title, chart.xLabel, chart.yLabel, body);
}

export function barChartSvg(chart: BarChart): string {
  const values = [
    ...chart.series.flatMap((s) => [...s.values, ...(s.high ?? [])]),
    ...(chart.references ?? []).map((r) => r.value),
  ].filter((v): v is number => v !== null && Number.isFinite(v));
  const y = chart.yLog
    ? logScale(Math.min(...values), Math.max(...values), PLOT.height, true)
    : linearScale(0, Math.max(...values), PLOT.height, true);
  const body = [...yAxis(y), axes];
  const group = PLOT.width / chart.categories.length;
  const bar = (group * 0.8) / chart.series.length;
  const base = chart.yLog ? PLOT.height : y.at(0);
  chart.categories.forEach((category, c) => {
    const cx = group * (c + 0.5);
    // Long labels ("a / b") go on two lines so that neighbours do not overlap.
    const lines = category.split(/(?<= \/) /);
    const spans = lines.map((line, i) => `<tspan x="${cx.toFixed(1)}" dy="${i ? 14 : 0}">${xml(line)}</tspan>`);
    body.push(`<text y="${PLOT.height + 18}" font-size="12" text-anchor="middle">${spans.join('')}</text>`);
    chart.series.forEach((s, i) => {
      const value = s.values[c];
      if (value === null || value === undefined || !Number.isFinite(value)) return;
      const left = group * c + group * 0.1 + bar * i;
      const top = y.at(value);
      const colour = COLOURS[i % COLOURS.length] as string;
      body.push(
        `<rect x="${left.toFixed(1)}" y="${top.toFixed(1)}" width="${(bar - 2).toFixed(1)}" height="${Math.max(0, base - top).toFixed(1)}" fill="${colour}"/>`,
      );
      const [low, high] = [s.low?.[c], s.high?.[c]];
      if (low !== null && low !== undefined && high !== null && high !== undefined && high > low) {
        const mid = left + (bar - 2) / 2;
        body.push(
          `<path d="M${mid.toFixed(1)},${y.at(low).toFixed(1)} V${y.at(high).toFixed(1)}" stroke="#333" stroke-width="1.5"/>`,
        );
      }
    });
  });
  body.push(...references(chart.references, y));
  body.push(
    ...legend(chart.series.map((s, i) => ({ name: s.name, colour: COLOURS[i % COLOURS.length] as string, bar: true }))),
  );
  return frame(chart.title, chart.xLabel ?? '', chart.yLabel, body);
}

export function chartSvg(chart: Chart): string {
  return chart.kind === 'line' ? lineChartSvg(chart) : barChartSvg(chart);
}

/** Renders every chart to `<dir>/<chart.file>`. */
export async function writeCharts(charts: Chart[], dir: string): Promise<void> {
  for (const chart of charts)
    await sharp(Buffer.from(chartSvg(chart)))
      .png()
      .toFile(join(dir, chart.file));
}
