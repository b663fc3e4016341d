/** An RGB colour, 0..255 per channel. */
export type Rgb = readonly [number, number, number];

/**
 * Viridis (matplotlib; van der Walt and Smith), sampled at nine even stops. Perceptually uniform
 * and readable with the common colour-vision deficiencies, and its lightness rises steadily from
 * dark purple to yellow, so higher surfaces are lighter: roofs and tree tops stand out, and the
 * picture still reads in greyscale.
 */
export const VIRIDIS: readonly Rgb[] = [
  [68, 1, 84],
  [71, 45, 123],
  [59, 82, 139],
  [44, 114, 142],
  [33, 145, 140],
  [40, 174, 128],
  [94, 201, 98],
  [173, 220, 48],
  [253, 231, 37],
];

/** The height range a picture's colours span. */
export interface HeightRange {
  min: number;
  max: number;
}

/** Below this span (metres) an AOI counts as flat and is drawn in the ramp's middle colour. */
const FLAT_SPAN = 1e-3;

/**
 * A `gdaldem color-relief` colour file spreading the ramp evenly over `range`: one line per stop
 * (`height R G B A`), linearly interpolated between stops by gdaldem, plus `nv` (nodata) fully
 * transparent. A flat range is widened around its value so every pixel takes the middle colour.
 */
export function colourReliefFile(range: HeightRange, ramp: readonly Rgb[] = VIRIDIS): string {
  let { min, max } = range;
  if (!(max - min >= FLAT_SPAN)) {
    const middle = (min + max) / 2;
    min = middle - 0.5;
    max = middle + 0.5;
  }
  const lines = ramp.map(([r, g, b], i) => {
    const height = min + ((max - min) * i) / (ramp.length - 1);
    return `${height} ${r} ${g} ${b} 255`;
  });
  lines.push('nv 0 0 0 0');
  return `${lines.join('\n')}\n`;
}

/** The ramp's colour at `fraction` (0..1) of the range, interpolated as gdaldem does. */
export function rampColour(fraction: number, ramp: readonly Rgb[] = VIRIDIS): Rgb {
  const position = Math.max(0, Math.min(1, fraction)) * (ramp.length - 1);
  const lower = Math.min(ramp.length - 2, Math.floor(position));
  const t = position - lower;
  const a = ramp[lower] as Rgb;
  const b = ramp[lower + 1] as Rgb;
  return [0, 1, 2].map((k) => (a[k] as number) + t * ((b[k] as number) - (a[k] as number))) as unknown as Rgb;
}
