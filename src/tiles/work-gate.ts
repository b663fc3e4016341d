/**
 * At most `slots` tasks at a time, the rest waiting in order. sharp runs each encode or decode on
 * its own libuv thread; with dozens of tile requests in flight and a pool of 16 threads (sized for
 * GDAL's raster downloads), 16 CPU-bound threads would share the cores with the event loop, which
 * then parses, routes and answers late: on 2 cores that was a p99 ten times the median. Queueing in
 * JavaScript instead keeps one encode per core running and answers in arrival order.
 */
export class WorkGate {
  readonly #slots: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(slots: number) {
    if (!(slots >= 1)) throw new RangeError('a gate needs at least one slot');
    this.#slots = slots;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#slots) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#running++;
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
