/**
 * Buffers that encoded composite tiles are written into and sent from, reused once an answer is
 * sent. A PNG tile is about 100 KB: a fresh Buffer per answer, at over a thousand answers a second,
 * made V8 run a full garbage collection every half second or so (the bytes of short-lived
 * ArrayBuffers count towards its old-space limit), and each one held up every answer in flight.
 */
export class AnswerBuffers {
  readonly #size: number;
  readonly #kept: number;
  readonly #free: Buffer[] = [];

  /** Buffers of `size` bytes; at most `kept` are held while unused. */
  constructor(size: number, kept: number) {
    this.#size = size;
    this.#kept = kept;
  }

  take(): Buffer {
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(this.#size);
  }

  /**
   * Back for reuse: only once nothing reads it any more (the answer sent, or never made). A buffer
   * not given back is simply collected.
   */
  give(buffer: Buffer): void {
    if (this.#free.length < this.#kept && buffer.byteLength === this.#size) this.#free.push(buffer);
  }
}
