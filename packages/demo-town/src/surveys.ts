/**
 * The demo surveys: which part of town each flight covered, when, under what sun.
 * Footprints are polygons in local metres (geo.ts); each raster's extent is the footprint's
 * bounding box and its alpha/nodata marks the polygon.
 */
import type { Sun } from './scene-types.js';

export type Point = readonly [number, number];

export interface DemoSurvey {
  /** Directory name under outDir. */
  name: string;
  /** Fixed so that re-running the generator replaces the same surveys. */
  id: string;
  captureDate: string;
  firstPhotoTime: string;
  lastPhotoTime: string;
  tags: string[];
  footprint: Point[];
  sun: Sun;
  /** Offset of this flight's photo-centre grid (local metres), so lean patterns differ per survey. */
  photoGridOffset: Point;
  /** Decimal year used for tree growth and what has been built. */
  epoch: number;
  afterHurricane: boolean;
}

/** Photo centres of the Vert camera grid: spacing and flying height above the ground. */
export const PHOTO_SPACING = 120;
export const FLYING_HEIGHT = 400;

export const DEMO_SURVEYS: readonly DemoSurvey[] = [
  {
    name: '2024-03-14',
    id: '6f1c2a9e-3b7d-4e51-9a0c-2d4e8b1f7a01',
    captureDate: '2024-03-14',
    // 09:02-10:40 CDT
    firstPhotoTime: '2024-03-14T14:02:11Z',
    lastPhotoTime: '2024-03-14T15:40:52Z',
    tags: [],
    // West/central, an L: the north-east quarter was not flown.
    footprint: [
      [-290, -250],
      [110, -250],
      [110, 60],
      [-60, 60],
      [-60, 270],
      [-290, 270],
    ],
    sun: { azimuthDeg: 122, elevationDeg: 38 },
    photoGridOffset: [37, -23],
    epoch: 2024.2,
    afterHurricane: false,
  },
  {
    name: '2025-04-02',
    id: '0b8e4d27-91c3-4f6a-b2e5-7c9d1a3e5f02',
    captureDate: '2025-04-02',
    // 09:35-11:05 CDT
    firstPhotoTime: '2025-04-02T14:35:08Z',
    lastPhotoTime: '2025-04-02T16:05:33Z',
    tags: [],
    // The widest flight: a six-sided block boundary.
    footprint: [
      [-290, -270],
      [230, -300],
      [310, -90],
      [285, 275],
      [-140, 300],
      [-300, 140],
    ],
    sun: { azimuthDeg: 112, elevationDeg: 46 },
    photoGridOffset: [-51, 44],
    epoch: 2025.25,
    afterHurricane: false,
  },
  {
    name: '2025-10-20',
    id: 'd3a5f7c1-6e2b-4c89-8f14-5b0a9e2c7d03',
    captureDate: '2025-10-20',
    // 10:12-11:48 CDT, after the storm
    firstPhotoTime: '2025-10-20T15:12:40Z',
    lastPhotoTime: '2025-10-20T16:48:05Z',
    tags: ['disaster:hurricane'],
    // East/central, with the north-west corner cut off.
    footprint: [
      [-90, -300],
      [310, -300],
      [310, 230],
      [140, 260],
      [-90, 260],
    ],
    sun: { azimuthDeg: 138, elevationDeg: 40 },
    photoGridOffset: [12, 58],
    epoch: 2025.8,
    afterHurricane: true,
  },
];
