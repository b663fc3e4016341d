/**
 * The base of the measured and traced parts (measured-parts.ts, tracing/traced-parts.ts): a plain
 * object with `target`'s methods bound to it and its other properties copied, of which they
 * override some methods. Bound once here, so a call through it costs no more than one through the
 * part (the parts keep their state in private fields, which neither Object.create nor an unbound
 * method can reach).
 */
export function delegateTo<T extends object>(target: T): T {
  const delegate: Record<string, unknown> = {};
  for (let level: object | null = target; level && level !== Object.prototype; level = Object.getPrototypeOf(level)) {
    for (const name of Object.getOwnPropertyNames(level)) {
      if (name === 'constructor' || name in delegate) continue;
      const value = (target as Record<string, unknown>)[name];
      delegate[name] = typeof value === 'function' ? value.bind(target) : value;
    }
  }
  return delegate as T;
}
