/**
 * Seeded randomness. Layout decisions draw from a mulberry32 stream; textures use stateless
 * integer hashes so any pixel can be evaluated on its own, in any order, with the same result.
 * Nothing here touches Math.random or the clock: same seed, same town, byte for byte.
 */

/** mulberry32: tiny, fast, good enough for procedural layout. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class SeededRandom {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  float(): number {
    return this.next();
  }

  range(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  int(min: number, maxInclusive: number): number {
    return min + Math.floor(this.next() * (maxInclusive - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }
}

/** murmur3's 32-bit finaliser: spreads every input bit over the whole word. */
function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A uint32 hash of a seed and two integers (lattice coordinates, ids). */
export function hash3(seed: number, x: number, y: number): number {
  const h = fmix32((seed | 0) + Math.imul(x | 0, 0x27d4eb2d));
  return fmix32(h + Math.imul(y | 0, 0x165667b1));
}

/** hash3 scaled to [0, 1). */
export function hashUnit(seed: number, x: number, y: number): number {
  return hash3(seed, x, y) / 4294967296;
}

/**
 * Per-pixel grain in [0, 1): one mixing round instead of hash3's two. Texture noise is
 * evaluated for tens of millions of cells, and needs to look random, not be a good hash.
 */
export function cellGrain(seed: number, x: number, y: number): number {
  return fmix32((seed | 0) + Math.imul(x | 0, 0x27d4eb2d) + Math.imul(y | 0, 0x165667b1)) / 4294967296;
}

/** Smooth 2D value noise in [0, 1): hashed lattice values, smoothstep-interpolated. */
export function valueNoise(seed: number, x: number, y: number): number {
  const xi = Math.floor(x);
  const yi = Math.floor(y);
  const fx = x - xi;
  const fy = y - yi;
  const u = fx * fx * (3 - 2 * fx);
  const v = fy * fy * (3 - 2 * fy);
  const a = hashUnit(seed, xi, yi);
  const b = hashUnit(seed, xi + 1, yi);
  const c = hashUnit(seed, xi, yi + 1);
  const d = hashUnit(seed, xi + 1, yi + 1);
  const top = a + (b - a) * u;
  const bottom = c + (d - c) * u;
  return top + (bottom - top) * v;
}

/** Fractal sum of value noise octaves, normalised back to [0, 1). */
export function fractalNoise(seed: number, x: number, y: number, octaves: number): number {
  let sum = 0;
  let amplitude = 1;
  let total = 0;
  let frequency = 1;
  for (let octave = 0; octave < octaves; octave++) {
    sum += amplitude * valueNoise(seed + octave * 1013, x * frequency, y * frequency);
    total += amplitude;
    amplitude *= 0.5;
    frequency *= 2;
  }
  return sum / total;
}

/** Derive an independent seed for a named purpose, so streams do not share sequences. */
export function deriveSeed(seed: number, purpose: number): number {
  return hash3(seed, purpose, 0x5eed);
}
