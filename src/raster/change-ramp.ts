import type { Rgb } from './colour-ramp.js';

/** One stop of the height-change ramp: a change in metres (after - before) and its colour. */
export interface ChangeStop {
  metres: number;
  colour: Rgb;
}

/**
 * The diverging ramp of DsmChange pictures and tiles: ColorBrewer's RdBu (Cynthia Brewer, 11
 * classes), red for height lost, blue for height gained, near-white for no change. Diverging
 * schemes read with the common colour-vision deficiencies when, like this one, the two arms differ
 * in hue and lightness falls away from the middle. The stops are fixed metres, not this AOI's
 * range, so one legend (docs/imagery.md) reads every picture and every tile, and they are closer
 * together near 0: a fallen tree (-5..-15 m) and a lost roof (-3..-8 m) must stand out from
 * half a metre of growth. Beyond +-10 m the end colours hold (gdaldem clamps to the end stops).
 */
export const CHANGE_RAMP: readonly ChangeStop[] = [
  { metres: -10, colour: [103, 0, 31] },
  { metres: -5, colour: [178, 24, 43] },
  { metres: -2, colour: [214, 96, 77] },
  { metres: -1, colour: [244, 165, 130] },
  { metres: -0.5, colour: [253, 219, 199] },
  { metres: 0, colour: [247, 247, 247] },
  { metres: 0.5, colour: [209, 229, 240] },
  { metres: 1, colour: [146, 197, 222] },
  { metres: 2, colour: [67, 147, 195] },
  { metres: 5, colour: [33, 102, 172] },
  { metres: 10, colour: [5, 48, 97] },
];

/**
 * The `gdaldem color-relief` colour file of the ramp (linear between stops, clamped beyond the
 * ends), nodata transparent.
 */
export function changeColourFile(): string {
  const lines = CHANGE_RAMP.map(({ metres, colour: [r, g, b] }) => `${metres} ${r} ${g} ${b} 255`);
  lines.push('nv 0 0 0 0');
  return `${lines.join('\n')}\n`;
}

/** The ramp's colour for a change in metres, interpolated linearly between stops as gdaldem does. */
export function changeColour(metres: number): Rgb {
  const first = CHANGE_RAMP[0] as ChangeStop;
  const last = CHANGE_RAMP[CHANGE_RAMP.length - 1] as ChangeStop;
  if (!(metres > first.metres)) return first.colour;
  if (metres >= last.metres) return last.colour;
  let upper = 1;
  while ((CHANGE_RAMP[upper] as ChangeStop).metres < metres) upper++;
  const a = CHANGE_RAMP[upper - 1] as ChangeStop;
  const b = CHANGE_RAMP[upper] as ChangeStop;
  const t = (metres - a.metres) / (b.metres - a.metres);
  return [0, 1, 2].map((k) =>
    Math.round((a.colour[k] as number) + t * ((b.colour[k] as number) - (a.colour[k] as number))),
  ) as unknown as Rgb;
}
