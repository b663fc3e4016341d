/**
 * Turns the town plan into what one survey saw: what had been built by then, how far the
 * trees had grown, and, after the hurricane, damaged roofs, tarps, felled trees and debris.
 */
import { DEBRIS_COLORS } from './palette.js';
import { PLAN_EPOCH, type TownPlan } from './plan-builder.js';
import { deriveSeed, hash3, SeededRandom } from './random.js';
import type { Building, Decal, FramePatch, SceneObject, Tree } from './scene-types.js';
import { treeCrownBase } from './scene-types.js';
import { stormFate } from './storm-damage.js';
import type { DemoSurvey } from './surveys.js';

export interface SurveyContent {
  objects: SceneObject[];
  decals: Decal[];
}

/** Direction the storm's winds threw trees: towards the north-west, give or take. */
const STORM_FALL_ANGLE = (140 * Math.PI) / 180;

export function contentForSurvey(plan: TownPlan, survey: DemoSurvey, seed: number): SurveyContent {
  const epoch = survey.epoch;
  const stormSeed = deriveSeed(seed, 81);
  const objects: SceneObject[] = [];
  const decals: Decal[] = [];
  for (const planned of plan.decals) {
    if ((planned.from === undefined || epoch >= planned.from) && (planned.until === undefined || epoch < planned.until))
      decals.push(planned.decal);
  }
  plan.buildings.forEach((planned, index) => {
    if (planned.from !== undefined && epoch < planned.from) return;
    const building = planned.building;
    const fate = survey.afterHurricane ? stormFate(planned) : 'intact';
    if (fate === 'intact') {
      objects.push(building);
      return;
    }
    const rng = new SeededRandom(hash3(stormSeed, index, 1));
    if (fate === 'destroyed') {
      // Destroyed: only the slab and the wreckage remain.
      decals.push({ kind: 'decal', ...rectOf(building), pattern: 'slab', color: [176, 172, 164], dz: 0.2 });
      scatterDebris(decals, building, rng, 36, 2);
      return;
    }
    objects.push({ ...building, damage: roofDamage(building, rng) });
    scatterDebris(decals, building, rng, rng.int(4, 14), 10);
  });
  plan.trees.forEach((planned, index) => {
    if (planned.from !== undefined && epoch < planned.from) return;
    const age = epoch - (planned.from ?? PLAN_EPOCH);
    const growth = 1 + planned.growthPerYear * Math.max(0, age);
    const source = planned.tree;
    const topZ = source.baseZ + (source.topZ - source.baseZ) * growth;
    const tree: Tree = {
      ...source,
      radius: source.radius * growth,
      topZ,
      crownBaseZ: treeCrownBase(source.species, source.baseZ, topZ),
    };
    const fallChance = source.species === 'palm' ? 0.06 : 0.2;
    if (survey.afterHurricane && planned.roll < fallChance) {
      const wobble = (hash3(stormSeed, index, 2) / 4294967296 - 0.5) * 1.6;
      tree.fallenAngle = STORM_FALL_ANGLE + wobble;
    }
    objects.push(tree);
  });
  return { objects, decals };
}

function rectOf(building: Building) {
  return {
    x: building.x,
    y: building.y,
    cos: building.cos,
    sin: building.sin,
    halfLength: building.halfLength,
    halfWidth: building.halfWidth,
  };
}

/** Missing shingles (decking shows) on one or both slopes, and blue tarps on about half the roofs. */
function roofDamage(building: Building, rng: SeededRandom): { missing: FramePatch[]; tarps: FramePatch[] } {
  const { halfLength: hl, halfWidth: hw } = building;
  const patch = (minLength: number, maxLength: number, minDepth: number, maxDepth: number): FramePatch => {
    const length = Math.min(rng.range(minLength, maxLength), 2 * hl - 1);
    const a0 = rng.range(-hl + 0.5, hl - 0.5 - length);
    const side = rng.chance(0.5) ? 1 : -1;
    const depth = Math.min(rng.range(minDepth, maxDepth), hw - 0.5);
    const start = rng.range(0.3, Math.max(0.31, hw - depth - 0.3));
    const b0 = side > 0 ? start : -start - depth;
    return { a0, a1: a0 + length, b0, b1: b0 + depth };
  };
  const missing: FramePatch[] = [];
  for (let n = rng.int(1, 4); n > 0; n--) missing.push(patch(1.2, 4.5, 1, 3));
  const tarps: FramePatch[] = [];
  if (rng.chance(0.5)) tarps.push(patch(3, 7, hw * 0.5, hw - 0.4));
  return { missing, tarps };
}

/** Pieces of roofing, siding and lumber strewn around a building. */
function scatterDebris(decals: Decal[], building: Building, rng: SeededRandom, count: number, spread: number): void {
  for (let n = 0; n < count; n++) {
    const angle = rng.range(0, Math.PI * 2);
    const distance = rng.range(0, Math.max(building.halfLength, building.halfWidth) + spread);
    const turn = rng.range(0, Math.PI);
    const color = rng.chance(0.3) ? building.roofColor : rng.pick(DEBRIS_COLORS);
    decals.push({
      kind: 'decal',
      x: building.x + Math.cos(angle) * distance,
      y: building.y + Math.sin(angle) * distance,
      cos: Math.cos(turn),
      sin: Math.sin(turn),
      halfLength: rng.range(0.3, 1.6),
      halfWidth: rng.range(0.15, 0.7),
      pattern: 'debris',
      color,
      dz: rng.range(0.1, 0.45),
    });
  }
}
