/** A full garbage collection on demand (src/cli/full-garbage-collection.ts), as `nadir demo` runs between generating and ingesting. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { collectGarbage } from '../../src/cli/full-garbage-collection.js';

const MB = 1 << 20;

/** Waits up to `ms` for `condition`: V8 frees collected array buffers on a background thread. */
async function eventually(condition: () => boolean, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(10)) if (condition()) return true;
  return condition();
}

it('collectGarbage frees SharedArrayBuffers nothing references any more, as nadir demo needs before ingesting', async () => {
  // What the demo town's generator leaves behind when it returns, in small: shared arrays that
  // outlived collections while in use, then dropped (V8 raises its external memory limit past
  // live buffers at each collection, so dropping them alone does not prompt one).
  let held: Uint32Array | undefined = new Uint32Array(new SharedArrayBuffer(48 * MB)).fill(7);
  collectGarbage();
  const withArrays = process.memoryUsage().arrayBuffers;
  assert.ok(withArrays >= 48 * MB && held[0] === 7, `${withArrays} bytes of array buffers`);
  held = undefined;
  collectGarbage();
  const freed = await eventually(() => process.memoryUsage().arrayBuffers <= withArrays - 40 * MB, 2000);
  assert.ok(freed, `still ${(process.memoryUsage().arrayBuffers / MB).toFixed(0)} MB of array buffers`);
  assert.equal(typeof globalThis.gc, 'undefined', 'gc is not left exposed to the process');
});
