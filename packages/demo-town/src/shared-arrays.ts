/**
 * Typed arrays over SharedArrayBuffers: the height model and ground layer are read (and
 * painted, row ranges at a time) by render workers without being copied.
 */

export function sharedFloat32(length: number): Float32Array {
  return new Float32Array(new SharedArrayBuffer(length * 4));
}

export function sharedUint32(length: number): Uint32Array {
  return new Uint32Array(new SharedArrayBuffer(length * 4));
}

export function sharedUint16(length: number): Uint16Array {
  return new Uint16Array(new SharedArrayBuffer(length * 2));
}
