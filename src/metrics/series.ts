/**
 * Counters and histograms for the request path, exposed through prom-client's registry (which
 * formats, and sums across `serve --workers`) but counted without it. prom-client hashes and
 * validates a series' labels on every inc() and observe(), even through a labels() child: on a
 * pass-through tile (some 60 µs of CPU) that alone was several per cent. Here a series is looked
 * up once, by whoever records into it, and recording is adding to numbers it holds; labels are
 * only turned into text at scrape time.
 *
 * A registry takes any object with name, help, type, aggregator and get() (prom-client's own
 * metrics are such objects): these are registered that way.
 */
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

/** One counter series: add to `value`. */
export interface CounterSeries {
  readonly labels: Labels;
  value: number;
}

/** One histogram series: bucket counts (not cumulative: made so at scrape time), sum and count. */
export class HistogramSeries {
  readonly labels: Labels;
  readonly #bounds: readonly number[];
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(labels: Labels, bounds: readonly number[]) {
    this.labels = labels;
    this.#bounds = bounds;
    // The last slot is +Inf.
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    (this.counts[i] as number)++;
    this.sum += value;
    this.count++;
  }
}

interface MetricValue {
  value: number;
  labels: Labels;
  metricName?: string;
}

abstract class Family<Series extends { labels: Labels }> {
  readonly name: string;
  readonly help: string;
  /** Summed across `serve --workers` (prom-client's AggregatorRegistry). */
  readonly aggregator = 'sum';
  readonly #series = new Map<string, Series>();

  constructor(registry: Registry, name: string, help: string) {
    this.name = name;
    this.help = help;
    registry.registerMetric(this as never);
  }

  /** The series of `labels`, made (and exported, at 0) on first use: look it up once, keep it. */
  series(labels: Labels = {}): Series {
    const key = JSON.stringify(labels);
    let series = this.#series.get(key);
    if (!series) {
      series = this.create(labels);
      this.#series.set(key, series);
    }
    return series;
  }

  protected abstract create(labels: Labels): Series;

  protected all(): Series[] {
    return [...this.#series.values()];
  }
}

export class FastCounter extends Family<CounterSeries> {
  readonly type = 'counter';

  protected create(labels: Labels): CounterSeries {
    return { labels, value: 0 };
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values = this.all().map(({ labels, value }) => ({ labels, value }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

export class FastHistogram extends Family<HistogramSeries> {
  readonly type = 'histogram';
  readonly #bounds: readonly number[];

  constructor(registry: Registry, name: string, help: string, bounds: readonly number[]) {
    super(registry, name, help);
    this.#bounds = bounds;
  }

  protected create(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.#bounds);
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    for (const series of this.all()) {
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += series.counts[i] as number;
        values.push({
          labels: { ...series.labels, le: String(bound) },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      });
      values.push({ labels: { ...series.labels, le: '+Inf' }, value: series.count, metricName: `${this.name}_bucket` });
      values.push({ labels: series.labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: series.labels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
