import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection, now. For a process that has just dropped large buffers and goes on to
 * an ingest: GDAL's memory is not V8's, so an ingest allocates too little JavaScript for V8 to see
 * a reason to collect, and garbage from before it can stay resident for much of it. `nadir demo`
 * calls this between generating the town and ingesting it (the generator's height model and
 * ground, 650 MB of SharedArrayBuffers, are garbage once it returns; docs/demo.md, "Memory").
 *
 * V8 offers a collection only to a process started with --expose-gc; the flag set at run time
 * exposes `gc` to contexts made afterwards, so one is made for it and the flag is put back.
 * V8 returns the collected array buffers' memory on a background thread a moment later.
 */
export function collectGarbage(): void {
  if (typeof globalThis.gc === 'function') {
    globalThis.gc();
    return;
  }
  setFlagsFromString('--expose-gc');
  try {
    (runInNewContext('gc') as () => void)();
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
