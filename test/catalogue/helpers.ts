import type { Asset, ContentType, Survey } from '../../src/catalogue/survey.js';
import type { MultiPolygon, Ring } from '../../src/geo/polygon.js';
import type { Bounds } from '../../src/geo/web-mercator.js';

export const box = (minX: number, minY: number, maxX: number, maxY: number): Bounds => ({ minX, minY, maxX, maxY });

export function rectRing(b: Bounds): Ring {
  return [
    [b.minX, b.minY],
    [b.maxX, b.minY],
    [b.maxX, b.maxY],
    [b.minX, b.maxY],
    [b.minX, b.minY],
  ];
}

export const rectFootprint = (b: Bounds): MultiPolygon => [[rectRing(b)]];

/** An L: the rectangle `b` without its top-right quarter (the notch). */
export function lFootprint(b: Bounds): MultiPolygon {
  const mx = (b.minX + b.maxX) / 2;
  const my = (b.minY + b.maxY) / 2;
  return [
    [
      [
        [b.minX, b.minY],
        [b.maxX, b.minY],
        [b.maxX, my],
        [mx, my],
        [mx, b.maxY],
        [b.minX, b.maxY],
        [b.minX, b.minY],
      ],
    ],
  ];
}

export function asset(surveyId: string, type: ContentType, version = 1): Asset {
  return {
    type,
    uri: `file:///data/surveys/${surveyId}/v${version}/${type}.tif`,
    gsd: type === 'DetailDsm' ? 0.15 : 0.075,
    maxZoom: 21,
    minZoom: 15,
    bounds: { minX: 1000, minY: 2000, maxX: 3000, maxY: 4000 },
    width: 2048,
    height: 2048,
    kind: type === 'DetailDsm' ? 'elevation' : 'rgb',
    version,
  };
}

export interface SurveyOptions {
  captureDate?: string;
  lastPhotoTime?: string;
  tags?: string[];
  footprint?: MultiPolygon;
  types?: ContentType[];
  version?: number;
}

export function survey(id: string, options: SurveyOptions = {}): Survey {
  const captureDate = options.captureDate ?? '2024-06-01';
  const version = options.version ?? 1;
  const types = options.types ?? ['Vert', 'TrueOrtho', 'DetailDsm'];
  return {
    id,
    captureDate,
    firstPhotoTime: `${captureDate}T09:00:00Z`,
    lastPhotoTime: options.lastPhotoTime ?? `${captureDate}T12:00:00Z`,
    tags: options.tags ?? [],
    footprint: options.footprint ?? rectFootprint(box(10, 44, 10.01, 44.01)),
    version,
    assets: Object.fromEntries(types.map((type) => [type, asset(id, type, version)])),
    ingestedAt: '2025-01-01T00:00:00.000Z',
  };
}

/** A search of the whole world with no filters, newest first, unpaged. */
export const everything = { area: box(-180, -90, 180, 90), limit: 100_000, offset: 0 };
