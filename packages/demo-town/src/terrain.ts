/**
 * Bare-earth elevation: a gently rising coastal plain, a beach, the Gulf at sea level and a
 * pond sunk into a park. Smooth on purpose: it is sampled coarsely and interpolated.
 */
import { localToTown, townToLocal } from './geo.js';
import { POND_RADIUS, POND_TOWN } from './landmarks.js';
import { BEACH_WIDTH, COAST_T } from './layout.js';
import { deriveSeed, fractalNoise, valueNoise } from './random.js';

export type TerrainZone = 'sea' | 'beach' | 'land' | 'pond';

export class Terrain {
  private readonly coastSeed: number;
  private readonly reliefSeed: number;
  private readonly pondSeed: number;
  readonly pondX: number;
  readonly pondY: number;
  readonly pondLevel: number;

  constructor(seed: number) {
    this.coastSeed = deriveSeed(seed, 11);
    this.reliefSeed = deriveSeed(seed, 12);
    this.pondSeed = deriveSeed(seed, 13);
    [this.pondX, this.pondY] = townToLocal(POND_TOWN.s, POND_TOWN.t);
    this.pondLevel = this.landHeight(this.pondX, this.pondY, POND_TOWN.t - this.coastT(POND_TOWN.s)) - 0.9;
  }

  /** Shoreline position (t) along the coast: wanders a few metres either side of COAST_T. */
  coastT(s: number): number {
    return (
      COAST_T +
      10 * (valueNoise(this.coastSeed, s / 70, 0.5) - 0.5) +
      3 * (valueNoise(this.coastSeed, s / 15, 7.5) - 0.5)
    );
  }

  /** Distance inland from the shoreline (negative at sea). */
  inland(x: number, y: number): number {
    const [s, t] = localToTown(x, y);
    return t - this.coastT(s);
  }

  /** Pond shore radius in the direction of (dx, dy): noise sampled on a circle so it closes up. */
  pondRadius(dx: number, dy: number): number {
    const r = Math.hypot(dx, dy) || 1;
    const wobble = valueNoise(this.pondSeed, 5 + (1.6 * dx) / r, 5 + (1.6 * dy) / r);
    return POND_RADIUS * (0.82 + 0.36 * wobble);
  }

  /** How far inside the pond shore (positive = in the water), metres. */
  pondDepth(x: number, y: number): number {
    const dx = x - this.pondX;
    const dy = y - this.pondY;
    return this.pondRadius(dx, dy) - Math.hypot(dx, dy);
  }

  zone(x: number, y: number): TerrainZone {
    const d = this.inland(x, y);
    if (d < 0) return 'sea';
    if (d < BEACH_WIDTH) return 'beach';
    return this.pondDepth(x, y) > 0 ? 'pond' : 'land';
  }

  /** Bare-earth elevation (water surfaces for sea and pond), metres above datum. */
  height(x: number, y: number): number {
    const d = this.inland(x, y);
    if (d < 0) return 0;
    if (d < BEACH_WIDTH) return 0.3 + d * 0.08;
    const land = this.landHeight(x, y, d);
    const depth = this.pondDepth(x, y);
    if (depth > 0) return this.pondLevel;
    // A 5 m bank slopes down to the water.
    if (depth > -5) return this.pondLevel + (land - this.pondLevel) * smoothstep(-depth / 5);
    return land;
  }

  private landHeight(x: number, y: number, inland: number): number {
    const rise = Math.min((inland - BEACH_WIDTH) * 0.012, 3.5);
    const relief = 0.9 * (fractalNoise(this.reliefSeed, x / 70, y / 70, 2) - 0.5);
    return 2.7 + rise + relief * Math.min(1, (inland - BEACH_WIDTH) / 20);
  }
}

function smoothstep(t: number): number {
  const c = t < 0 ? 0 : Math.min(t, 1);
  return c * c * (3 - 2 * c);
}
