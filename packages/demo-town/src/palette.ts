/** Colours of things in the demo town, picked to read like a Gulf-coast town from the air. */
import type { Rgb, RoofMaterial, TreeSpecies } from './scene-types.js';

export interface RoofChoice {
  color: Rgb;
  material: RoofMaterial;
}

export const HOUSE_ROOFS: readonly RoofChoice[] = [
  { color: [72, 74, 78], material: 'shingle' },
  { color: [96, 98, 102], material: 'shingle' },
  { color: [112, 88, 68], material: 'shingle' },
  { color: [150, 132, 104], material: 'shingle' },
  { color: [176, 92, 62], material: 'tile' },
  { color: [196, 200, 200], material: 'metal' },
  { color: [94, 116, 138], material: 'metal' },
  { color: [72, 112, 88], material: 'metal' },
  { color: [226, 226, 220], material: 'metal' },
];

export const HOUSE_WALLS: readonly Rgb[] = [
  [236, 234, 226],
  [232, 222, 196],
  [238, 226, 170],
  [190, 214, 226],
  [236, 200, 192],
  [196, 212, 182],
  [214, 206, 190],
];

export const FLAT_ROOFS: readonly Rgb[] = [
  [198, 198, 192],
  [226, 226, 222],
  [186, 172, 144],
  [120, 120, 124],
];

export const COMMERCIAL_WALLS: readonly Rgb[] = [
  [214, 204, 184],
  [200, 200, 196],
  [226, 214, 190],
];

export const CHURCH_WALL: Rgb = [236, 232, 222];
export const CHURCH_ROOF: Rgb = [78, 80, 88];
export const STORE_WALL: Rgb = [222, 210, 188];
export const ROOFTOP_UNIT: Rgb = [176, 180, 182];

export const CROWN_COLORS: Record<TreeSpecies, readonly Rgb[]> = {
  oak: [
    [58, 88, 44],
    [66, 96, 50],
    [52, 80, 42],
  ],
  pine: [
    [46, 72, 48],
    [54, 80, 52],
  ],
  palm: [
    [96, 126, 62],
    [110, 132, 70],
  ],
};

export const CONCRETE: Rgb = [198, 196, 188];
export const ASPHALT: Rgb = [82, 84, 88];
export const POOL_WATER: Rgb = [64, 170, 200];
export const SAND: Rgb = [222, 208, 168];
export const DECKING: Rgb = [112, 90, 64];
export const TARP: Rgb = [36, 92, 192];
export const BARK: Rgb = [96, 76, 56];
export const ROOT_SOIL: Rgb = [122, 98, 72];
export const WINDOW: Rgb = [52, 62, 76];

export const DEBRIS_COLORS: readonly Rgb[] = [
  [168, 138, 96],
  [226, 224, 216],
  [140, 140, 138],
  [96, 86, 76],
  [220, 170, 170],
  [190, 180, 150],
];
