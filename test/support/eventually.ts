/** Waits until `check` holds, asking every 10 ms; fails after `withinMs` saying what did not happen. */
export async function eventually(what: string, check: () => Promise<boolean>, withinMs = 2_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    if (performance.now() - started > withinMs) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
