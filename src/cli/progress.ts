/**
 * Progress for long commands: a redrawn bar on a terminal, plain lines elsewhere (CI logs,
 * pipes) at most once per stage change or 10% step, so logs stay readable.
 */
export interface ProgressReporter {
  update(label: string, fraction: number): void;
  done(message?: string): void;
}

const BAR_WIDTH = 28;

export function createProgressReporter(stream: NodeJS.WriteStream, prefix: string): ProgressReporter {
  if (stream.isTTY) {
    let lastDraw = 0;
    return {
      update(label, fraction) {
        const now = Date.now();
        if (now - lastDraw < 80 && fraction < 1) return;
        lastDraw = now;
        const filled = Math.round(Math.max(0, Math.min(1, fraction)) * BAR_WIDTH);
        const bar = `${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}`;
        const pct = `${Math.floor(fraction * 100)}`.padStart(3);
        const text = `${prefix} [${bar}] ${pct}% ${label}`;
        stream.write(`\r\x1b[2K${text.slice(0, (stream.columns || 100) - 1)}`);
      },
      done(message) {
        stream.write(`\r\x1b[2K${message ? `${prefix} ${message}\n` : ''}`);
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
      stream.write(`${prefix} ${Math.floor(fraction * 100)}% ${label}\n`);
    },
    done(message) {
      if (message) stream.write(`${prefix} ${message}\n`);
    },
  };
}
