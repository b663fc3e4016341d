/**
 * Reading a file's bytes straight from the kernel's page cache, on the calling thread, without ever
 * waiting for a disk (the addon's preadv2 with RWF_NOWAIT: native/tile-codec/src/page_read.c).
 *
 * A tile read handed to the libuv pool costs the event loop far more than the copy: queueing the
 * request, waking a pool thread (on 2 cores that thread often takes the event loop's own core) and
 * the completion coming back through the loop. Under cold-tile load that held the event loop about
 * 100 us of wall time per read, against a few microseconds for copying 30 KiB from the cache
 * (docs/tiles.md). Whatever is not cached is still read on the pool, so a disk never stalls the loop.
 */
import { nativeAddon } from './native-addon.js';

interface PageReadAddon {
  readCached(fd: number, buffer: Uint8Array, position: number): number;
}

/**
 * Fills `buffer` from `position` with what the page cache holds, in order: the bytes read (fewer
 * than asked, even 0, when the rest is not cached or the file ends), or undefined when the file
 * system cannot tell what is cached (then ask no more for that file).
 */
export function readCached(fd: number, buffer: Uint8Array, position: number): number | undefined {
  const read = nativeAddon<PageReadAddon>('tile-codec').readCached(fd, buffer, position);
  return read < 0 ? undefined : read;
}
