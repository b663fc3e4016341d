/**
 * Pacing many tile requests below a key's rate limit, from the X-RateLimit-* headers the server
 * sends with every tile (decisions.md "Tiles"): each window's requests spread evenly over what
 * is left of it, and a share of the limit left unused (by default a fifth) for the key's other
 * users, a map page on the same key or the next export. Without pacing an export spent the whole
 * window at once, then waited for the reset while anything else on the key got 429s.
 */
import type { RateLimitState } from './client.js';
import type { Clock, Sleep } from './waiting.js';

export interface PacerOptions {
  /** The share of each window's limit the export may use, (0, 1]. */
  share?: number;
  /** Told of a wait of a second or more, with its length: for a progress line. */
  onWait?: (ms: number) => void;
}

export const DEFAULT_PACE_SHARE = 0.8;
const RESET_MARGIN_MS = 100;

export class TilePacer {
  readonly #share: number;
  /** Requests sent since the state was last read from an answer: the server has counted them, the headers not yet. */
  #unanswered = 0;
  #lastState: RateLimitState | undefined;
  /** When the next request may go: the previous one's slot plus the spacing. */
  #nextAt = 0;
  /** The window's length, once two answers showed consecutive resets. */
  #windowMs: number | undefined;

  constructor(
    private readonly state: () => RateLimitState | undefined,
    private readonly clock: Clock,
    private readonly sleep: Sleep,
    private readonly options: PacerOptions = {},
  ) {
    const share = options.share ?? DEFAULT_PACE_SHARE;
    if (!(share > 0 && share <= 1)) throw new RangeError(`share must be in (0, 1], got ${share}`);
    this.#share = share;
  }

  /** The window's length in ms, when known (two resets seen). */
  get windowMs(): number | undefined {
    return this.#windowMs;
  }

  /** Waits for this request's slot; call before each request and `answered()` after its answer (or failure). */
  async turn(signal?: AbortSignal): Promise<void> {
    const now = this.clock();
    // The slot is taken before the wait, so requests that ask at once get successive slots.
    const slot = this.#slotFrom(now);
    this.#nextAt = slot;
    this.#unanswered++;
    const ms = slot - now;
    if (ms <= 0) return;
    if (ms >= 1000) this.options.onWait?.(ms);
    await this.sleep(ms, signal);
  }

  /** An answer came back (its headers are the client's rateLimit now). */
  answered(): void {
    this.#unanswered = Math.max(0, this.#unanswered - 1);
    const state = this.state();
    const last = this.#lastState;
    if (state && last && state.resetAt > last.resetAt && state.remaining > last.remaining) {
      this.#windowMs = state.resetAt - last.resetAt;
    }
    this.#lastState = state;
  }

  /** When the next request may go: now with no state yet or in a new window, else its even share of the rest. */
  #slotFrom(now: number): number {
    const state = this.state();
    if (!state || now >= state.resetAt) return now;
    const reserve = Math.ceil(state.limit * (1 - this.#share));
    const budget = state.remaining - reserve - this.#unanswered;
    // The export's share of this window is used: the rest is the key's other users'. The reset is
    // in whole seconds; a little past it, the server's new window has surely begun.
    if (budget <= 0) return state.resetAt + RESET_MARGIN_MS;
    const spacing = (state.resetAt - now) / budget;
    return Math.max(now, this.#nextAt + spacing);
  }
}

/** Common rate-limit windows: a window is guessed as the shortest of them holding the time to the reset. */
const WINDOWS_MS = [1_000, 10_000, 60_000, 600_000, 3_600_000, 86_400_000];

/**
 * Tiles a second the pacer lets through under this state: the share of the limit per window.
 * The window is the pacer's measured one, else a guess from one answer (the time to its reset,
 * rounded up to 1 s, 10 s, 1 min, 10 min, 1 h or 1 day): what an estimate before the start has.
 */
export function pacedRate(state: RateLimitState, now: number, windowMs?: number, share = DEFAULT_PACE_SHARE): number {
  const window =
    windowMs ?? WINDOWS_MS.find((ms) => ms >= state.resetAt - now) ?? WINDOWS_MS[WINDOWS_MS.length - 1] ?? 1000;
  return (Math.max(1, Math.floor(state.limit * share)) * 1000) / window;
}
