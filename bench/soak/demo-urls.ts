/**
 * URLs of every request kind on the benchmark's data (the demo town and the two bench surveys,
 * bench/tiles/data.ts): coverage around the town, and image downloads with a transaction token.
 */
import { DEMO_LOCATION } from '@nadir/demo-town';

/** The raster AOI's radius, m: the largest the API takes. */
export const RADIUS = 100;
const ALL_RESOURCES = 'TrueOrtho,DetailDsm';

/**
 * `count` points spread over a disc of `radiusDegrees` around the demo town's centre: 0.004 (about
 * 400 m) reaches past the town's edge, as coverage calls do; 0.001 stays on its imagery.
 */
export function demoPoints(count: number, radiusDegrees = 0.004): { lon: number; lat: number }[] {
  return Array.from({ length: count }, (_, i) => {
    const angle = (i * 2.399963) % (2 * Math.PI); // golden angle: spread without a grid
    const distance = radiusDegrees * Math.sqrt((i + 0.5) / count);
    return { lon: DEMO_LOCATION.lon + distance * Math.cos(angle), lat: DEMO_LOCATION.lat + distance * Math.sin(angle) };
  });
}

/** A coverage call (`resources` is required: the raster types, TrueOrtho and DetailDsm, by default). */
export function coverageUrl(
  base: string,
  apiKey: string,
  p: { lon: number; lat: number },
  resources = ALL_RESOURCES,
): string {
  const point = `${p.lon.toFixed(6)},${p.lat.toFixed(6)}`;
  return `${base}/staticmap/v2/coverage.json?apikey=${apiKey}&point=${point}&radius=${RADIUS}&resources=${resources}`;
}

export interface ImageDownload {
  url: (size: number, format: 'jpg' | 'png' | 'tif') => string;
  surveyId: string;
}

/** A coverage call at the town's centre for TrueOrtho, and the download URL its token opens. */
export async function demoImageDownload(base: string, apiKey: string): Promise<ImageDownload> {
  const point = `${DEMO_LOCATION.lon},${DEMO_LOCATION.lat}`;
  const response = await fetch(
    `${base}/staticmap/v2/coverage.json?apikey=${apiKey}&point=${point}&radius=${RADIUS}&resources=TrueOrtho`,
  );
  const answer = (await response.json()) as { transactionToken?: string; surveys?: { id: string }[] };
  const surveyId = answer.surveys?.[0]?.id;
  const token = answer.transactionToken;
  if (!token || !surveyId) throw new Error(`no demo survey at ${point}: ${JSON.stringify(answer)}`);
  return {
    surveyId,
    url: (size, format) =>
      `${base}/staticmap/v2/surveys/${surveyId}/TrueOrtho.${format}?transactionToken=${token}` +
      `&point=${point}&radius=${RADIUS}&size=${size}x${size}`,
  };
}
