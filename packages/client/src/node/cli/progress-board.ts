/**
 * Progress on stderr: a bar per file in flight and one for the whole set. On a terminal the
 * lines are redrawn in place (at most every 100 ms); elsewhere (--progress into a log) a line is
 * printed per finished file, per 10% of the whole and at least once a minute, so logs stay short
 * and a long export still shows it is alive. A note (a wait) lasts as long as the wait.
 */
import type { Clock } from '../../waiting.js';

export interface ProgressSink {
  write(text: string): unknown;
  isTTY?: boolean;
}

const BAR = 24;
const REDRAW_MS = 100;
/** Off a terminal, a line at least this often while something moves. */
const LOG_EVERY_MS = 60_000;
/** Off a terminal, a wait's note is a line of its own, at most this often (a paced export waits often). */
const NOTE_EVERY_MS = 10_000;

export function progressBar(fraction: number): string {
  const clamped = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
  const filled = Math.round(clamped * BAR);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}] ${`${Math.floor(clamped * 100)}%`.padStart(4)}`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
}

/** `45 s`, `12 min`, `3.5 h`: a duration as people read it. */
export function formatDuration(seconds: number): string {
  if (seconds < 90) return `${Math.max(0, Math.round(seconds))} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

export class ProgressBoard {
  readonly #files = new Map<string, { received: number; total: number | undefined }>();
  #done = 0;
  #drawnLines = 0;
  #lastDraw = Number.NEGATIVE_INFINITY;
  #lastStep = -1;
  #lastLine = Number.NEGATIVE_INFINITY;
  #note = '';
  #noteUntil = Number.POSITIVE_INFINITY;
  /** The count and time of the first tick: the pace is this run's, not counting resumed work. */
  #since: { done: number; at: number } | undefined;

  constructor(
    private readonly sink: ProgressSink,
    private readonly total: number,
    private readonly clock: Clock,
    private readonly unit = 'files',
  ) {}

  /**
   * A line shown with the overall bar (e.g. "waiting 12.0 s (rate-limited)"), for `forMs` when
   * given (a wait's length: the line goes when the wait ends), else until the next finished file.
   */
  note(text: string, forMs?: number): void {
    this.#note = text;
    this.#noteUntil = forMs === undefined ? Number.POSITIVE_INFINITY : this.clock() + forMs;
    this.#draw(true);
  }

  start(name: string): void {
    this.#files.set(name, { received: 0, total: undefined });
    this.#draw(false);
  }

  progress(name: string, received: number, total: number | undefined): void {
    this.#files.set(name, { received, total });
    this.#draw(false);
  }

  finish(name: string, summary: string): void {
    this.#files.delete(name);
    this.#done++;
    this.#note = '';
    if (this.sink.isTTY) {
      this.#clear();
      this.sink.write(`${name}: ${summary}\n`);
      this.#draw(true);
    } else {
      this.sink.write(`${name}: ${summary} (${this.#done}/${this.total} ${this.unit})\n`);
      this.#draw(false);
    }
  }

  /** Counts one unit as done without a line of its own (tile exports count tiles). */
  tick(count = 1): void {
    this.#since ??= { done: this.#done, at: this.clock() };
    this.#done += count;
    this.#draw(false);
  }

  /** `, 41 tiles/s, about 12 min left` once this run has done some, else ''. */
  #pace(now: number): string {
    const since = this.#since;
    const seconds = since ? (now - since.at) / 1000 : 0;
    if (!since || seconds < 1 || this.#done <= since.done) return '';
    const rate = (this.#done - since.done) / seconds;
    const shown = rate >= 10 ? rate.toFixed(0) : rate.toFixed(1);
    return `, ${shown} ${this.unit}/s, about ${formatDuration((this.total - this.#done) / rate)} left`;
  }

  end(): void {
    if (this.sink.isTTY) this.#clear();
  }

  #clear(): void {
    if (this.#drawnLines > 0) this.sink.write(`\x1b[${this.#drawnLines}F\x1b[J`);
    this.#drawnLines = 0;
  }

  #draw(force: boolean): void {
    const overall = this.total === 0 ? 1 : this.#done / this.total;
    const now = this.clock();
    if (now >= this.#noteUntil) this.#note = '';
    if (!this.sink.isTTY) {
      const step = Math.floor(overall * 10);
      const noted = force && this.#note !== '' && now - this.#lastLine >= NOTE_EVERY_MS;
      if (step !== this.#lastStep || noted || now - this.#lastLine >= LOG_EVERY_MS) {
        this.#lastStep = step;
        this.#lastLine = now;
        this.sink.write(
          `overall ${progressBar(overall)} ${this.#done}/${this.total} ${this.unit}${this.#pace(now)}${this.#note ? `; ${this.#note}` : ''}\n`,
        );
      }
      return;
    }
    if (!force && now - this.#lastDraw < REDRAW_MS) return;
    this.#lastDraw = now;
    const lines = [...this.#files].map(([name, file]) => {
      const fraction = file.total ? file.received / file.total : 0;
      return `${progressBar(fraction)} ${formatBytes(file.received).padStart(9)}  ${name}`;
    });
    lines.push(
      `${progressBar(overall)} ${this.#done}/${this.total} ${this.unit}${this.#pace(now)}${this.#note ? `  ${this.#note}` : ''}`,
    );
    this.#clear();
    this.sink.write(`${lines.join('\n')}\n`);
    this.#drawnLines = lines.length;
  }
}
