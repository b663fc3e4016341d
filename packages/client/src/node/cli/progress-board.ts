/**
 * Progress on stderr: a bar per file in flight and one for the whole set. On a terminal the
 * lines are redrawn in place (at most every 100 ms); elsewhere (--progress into a log) a line is
 * printed per finished file and per 10% of the whole, so logs stay short.
 */
import type { Clock } from '../../waiting.js';

export interface ProgressSink {
  write(text: string): unknown;
  isTTY?: boolean;
}

const BAR = 24;
const REDRAW_MS = 100;

export function progressBar(fraction: number): string {
  const clamped = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
  const filled = Math.round(clamped * BAR);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}] ${`${Math.floor(clamped * 100)}%`.padStart(4)}`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
}

export class ProgressBoard {
  readonly #files = new Map<string, { received: number; total: number | undefined }>();
  #done = 0;
  #drawnLines = 0;
  #lastDraw = Number.NEGATIVE_INFINITY;
  #lastStep = -1;
  #note = '';

  constructor(
    private readonly sink: ProgressSink,
    private readonly total: number,
    private readonly clock: Clock,
    private readonly unit = 'files',
  ) {}

  /** A line shown under the bars until the next change (e.g. "waiting 12 s for the rate limit"). */
  note(text: string): void {
    this.#note = text;
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
    this.#done += count;
    this.#draw(false);
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
    if (!this.sink.isTTY) {
      const step = Math.floor(overall * 10);
      if (step !== this.#lastStep || (force && this.#note)) {
        this.#lastStep = step;
        this.sink.write(
          `overall ${progressBar(overall)} ${this.#done}/${this.total} ${this.unit}${this.#note ? `; ${this.#note}` : ''}\n`,
        );
      }
      return;
    }
    const now = this.clock();
    if (!force && now - this.#lastDraw < REDRAW_MS) return;
    this.#lastDraw = now;
    const lines = [...this.#files].map(([name, file]) => {
      const fraction = file.total ? file.received / file.total : 0;
      return `${progressBar(fraction)} ${formatBytes(file.received).padStart(9)}  ${name}`;
    });
    lines.push(
      `${progressBar(overall)} ${this.#done}/${this.total} ${this.unit}${this.#note ? `  ${this.#note}` : ''}`,
    );
    this.#clear();
    this.sink.write(`${lines.join('\n')}\n`);
    this.#drawnLines = lines.length;
  }
}
