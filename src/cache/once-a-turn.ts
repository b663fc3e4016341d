/**
 * A value read at most once per turn of the event loop, for a check that every request would
 * otherwise repeat: a catalogue's change marker is a SQLite statement (three system calls, about
 * 6 us under load, 7% of a remembered coverage answer) or a PostgreSQL field. Everything handled
 * in one turn sees the value its first ask read; a change committed elsewhere shows from the next
 * turn on, as the account store's key cache has it (sqlite-account-store.ts).
 */
export class OnceATurn<T> {
  readonly #read: () => T;
  #value: T | undefined;
  #readThisTurn = false;

  constructor(read: () => T) {
    this.#read = read;
  }

  get(): T {
    if (!this.#readThisTurn) {
      // Read before the mark: a read that throws is tried again by the next ask.
      this.#value = this.#read();
      this.#readThisTurn = true;
      setImmediate(() => {
        this.#readThisTurn = false;
      });
    }
    return this.#value as T;
  }
}
