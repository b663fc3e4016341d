/** A polygon's rings for the box x0..x1, y0..y1 (lon/lat), closed, counter-clockwise: footprints and search areas in the GIS tests. */
export const square = (x0: number, y0: number, x1: number, y1: number) => [
  [
    [x0, y0],
    [x1, y0],
    [x1, y1],
    [x0, y1],
    [x0, y0],
  ] as [number, number][],
];
