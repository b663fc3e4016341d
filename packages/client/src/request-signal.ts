/**
 * A caller's AbortSignal, lent to one request. Node's fetch (undici) hangs an `abort` listener on
 * the signal it is given and lets go of it only when the request is garbage-collected
 * (nodejs/undici#3157, fixed upstream only in 2026): a signal reused for a walk of thousands of
 * STAC pages or tiles gathered thousands of listeners and MaxListenersExceeded warnings. So each
 * request gets its own signal that follows the caller's, and the link is cut as soon as the
 * answer's body has been read, cancelled or failed: the caller's signal keeps none of it.
 */

export interface LentSignal {
  /** What the request is sent with (undefined when the caller gave none). */
  signal: AbortSignal | undefined;
  /** Cuts the link to the caller's signal (idempotent). */
  release(): void;
}

export function lendSignal(parent: AbortSignal | undefined): LentSignal {
  if (!parent) return { signal: undefined, release() {} };
  const own = new AbortController();
  const follow = () => own.abort(parent.reason);
  if (parent.aborted) follow();
  else parent.addEventListener('abort', follow, { once: true });
  return { signal: own.signal, release: () => parent.removeEventListener('abort', follow) };
}

/** The same answer, whose body releases the lent signal once read to the end, cancelled or failed. */
export function releasingWhenRead(response: Response, release: () => void): Response {
  const source = response.body;
  if (!source) {
    release();
    return response;
  }
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
