/**
 * A value now, or a promise of it where finding it takes I/O. The tile lane's steps return one:
 * a map's repeated tiles are then answered in the very call node:http made with their request,
 * without a promise or a later turn of the microtask queue, which on that path cost as much as
 * the rest of nadir's work (docs/tiles.md). Callers that need not care simply `await` it.
 */
export type Decided<T> = T | Promise<T>;
