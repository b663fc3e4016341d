/** Tree placement helpers shared by the residential and civic block planners. */
import { CROWN_COLORS } from './palette.js';
import type { PlanBuilder } from './plan-builder.js';
import type { SeededRandom } from './random.js';
import type { TreeSpecies } from './scene-types.js';

export function randomTree(
  builder: PlanBuilder,
  rng: SeededRandom,
  s: number,
  t: number,
  species?: TreeSpecies,
  from?: number,
): void {
  const kind = species ?? rng.pick<TreeSpecies>(['oak', 'oak', 'oak', 'pine', 'pine', 'palm', 'palm']);
  const color = rng.pick(CROWN_COLORS[kind]);
  const growth = rng.range(0.08, 0.2);
  if (kind === 'oak')
    builder.addTree(s, t, kind, { radius: rng.range(2.2, 4.6), height: rng.range(6, 11), color, growth }, from);
  else if (kind === 'pine')
    builder.addTree(s, t, kind, { radius: rng.range(1.6, 2.6), height: rng.range(9, 15), color, growth }, from);
  else builder.addTree(s, t, kind, { radius: rng.range(2, 3), height: rng.range(6, 10), color, growth }, from);
}

/** Scatter up to `count` trees in a town-frame box, avoiding occupied space. */
export function scatterTrees(
  builder: PlanBuilder,
  rng: SeededRandom,
  box: { s0: number; s1: number; t0: number; t1: number },
  count: number,
): void {
  for (let i = 0; i < count; i++) {
    for (let attempt = 0; attempt < 8; attempt++) {
      const s = rng.range(box.s0 + 1.5, box.s1 - 1.5);
      const t = rng.range(box.t0 + 1.5, box.t1 - 1.5);
      if (!builder.isFree(s, t, 2.5)) continue;
      randomTree(builder, rng, s, t);
      builder.occupy(s, t, 1.5, 1.5);
      break;
    }
  }
}
