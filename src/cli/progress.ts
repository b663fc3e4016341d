import type { Clock } from '../clock.js';

/**
 * Progress for long commands: a redrawn bar with the elapsed time and an estimate of the time
 * left on a terminal, plain lines elsewhere (CI logs, pipes) at most once per stage change or 10%
 * step, so logs stay readable. Times come from the clock handed in (the service's one clock).
 */
export interface ProgressReporter {
  update(label: string, fraction: number): void;
  done(message?: string): void;
}

const BAR_WIDTH = 28;
/** No estimate before this share of the work is done: the first stages say little about the rest. */
const ETA_MIN_FRACTION = 0.02;
const REDRAW_MS = 100;

/** 42 s, 3 m 05 s, 1 h 02 m. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} m ${String(seconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} m`;
}

/**
 * Time left if the rest goes at the average pace so far; undefined while too little is done to
 * tell (or when nothing moved).
 */
export function estimateRemainingMs(fraction: number, elapsedMs: number): number | undefined {
  if (!(fraction >= ETA_MIN_FRACTION) || elapsedMs <= 0) return undefined;
  if (fraction >= 1) return 0;
  return (elapsedMs * (1 - fraction)) / fraction;
}

/** One progress line: `prefix [####----]  42% 1 m 05 s, ETA 1 m 30 s  label`. */
export function formatProgressLine(prefix: string, label: string, fraction: number, elapsedMs: number): string {
  const clamped = Math.max(0, Math.min(1, fraction));
  const filled = Math.round(clamped * BAR_WIDTH);
  const bar = `${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}`;
  const pct = `${Math.floor(clamped * 100)}%`.padStart(4);
  const remaining = estimateRemainingMs(clamped, elapsedMs);
  const eta = remaining === undefined ? 'ETA --' : `ETA ${formatDuration(remaining)}`;
  return `${prefix} [${bar}] ${pct} ${formatDuration(elapsedMs)}, ${eta}  ${label}`;
}

export function createProgressReporter(stream: NodeJS.WriteStream, prefix: string, clock: Clock): ProgressReporter {
  const started = clock().getTime();
  if (stream.isTTY) {
    let lastDraw = Number.NEGATIVE_INFINITY;
    return {
      update(label, fraction) {
        const now = clock().getTime();
        if (now - lastDraw < REDRAW_MS && fraction < 1) return;
        lastDraw = now;
        const text = formatProgressLine(prefix, label, fraction, now - started);
        stream.write(`\r\x1b[2K${text.slice(0, (stream.columns || 100) - 1)}`);
      },
      done(message) {
        const took = formatDuration(clock().getTime() - started);
        stream.write(`\r\x1b[2K${message ? `${prefix} ${message} (${took})\n` : ''}`);
      },
    };
  }
  let lastLabel = '';
  let lastStep = -1;
  return {
    update(label, fraction) {
      const step = Math.floor(fraction * 10);
      if (label === lastLabel && step === lastStep) return;
      lastLabel = label;
      lastStep = step;
      const elapsed = clock().getTime() - started;
      const remaining = estimateRemainingMs(fraction, elapsed);
      const eta = remaining === undefined ? '' : `, ETA ${formatDuration(remaining)}`;
      stream.write(`${prefix} ${Math.floor(fraction * 100)}% ${label} (${formatDuration(elapsed)}${eta})\n`);
    },
    done(message) {
      if (message) stream.write(`${prefix} ${message} (${formatDuration(clock().getTime() - started)})\n`);
    },
  };
}
