/**
 * Time as the client sees it: a clock and a sleep that a test replaces (so no test waits for
 * real), and every wait ends early, with the signal's reason, when its AbortSignal fires.
 */

/** Milliseconds since the Unix epoch, as Date.now gives them. */
export type Clock = () => number;

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The reason an aborted signal carries, or a generic AbortError. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

/** setTimeout as a promise; rejects with the signal's reason when it aborts, and stops the timer. */
export const timerSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
