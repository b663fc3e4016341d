/**
 * What a multi-type download of an AOI consists of: one image per survey and content type the
 * survey has, each at that type's native size from the coverage GSD (service-spec "Resolution
 * rule": types differ, so one size for all would over- or under-sample one of them).
 */
import { type Aoi, type ImageSize, nativeImageSize, pointParameter } from './area.js';
import type { ImageryType, RasterFormat, RasterType, Survey } from './types.js';

/** Generic in the type, so a plan of raster types stays typed as one (no DsmChange in it). */
export interface PlannedImage<T extends ImageryType = ImageryType> extends ImageSize {
  surveyId: string;
  captureDate: string | undefined;
  type: T;
  format: RasterFormat;
  /** DsmChange: the earlier survey the change is counted from. */
  baseline?: { id: string; captureDate: string | undefined };
  /**
   * `<captureDate>_<surveyId>_<type>_<lon>,<lat>_<radius>m_<size>px.<format>` (imageFileName):
   * everything the image is of, so a file is reused only for the very same request.
   */
  fileName: string;
}

export interface PlanOptions {
  /** DsmChange: this baseline for every later survey, instead of each one's next earlier survey. */
  baseline?: string;
}

export interface DownloadPlan<T extends ImageryType = ImageryType> {
  images: PlannedImage<T>[];
  /** Surveys and types asked for that the survey does not have. */
  missing: { surveyId: string; type: T }[];
}

/**
 * A downloaded image's file name: it sorts by date and says the survey, the type (DsmChange adds
 * its baseline's date and id), the AOI's point and radius and the pixel size, as
 * `2025-04-02_<survey>_TrueOrtho_-85.4181766,29.94582896_50m_1000px.tif`. A folder can then hold
 * several areas, and a file already there is reused only when it is the image asked for: a
 * name without the area let a second area's download keep the first area's file.
 */
export function imageFileName(
  survey: Pick<Survey, 'id' | 'captureDate'>,
  type: ImageryType,
  format: RasterFormat,
  of: { aoi: Aoi; size: number },
  baseline?: Pick<Survey, 'id' | 'captureDate'>,
): string {
  const date = survey.captureDate ? `${survey.captureDate}_` : '';
  const since = baseline ? `_${baseline.captureDate ? `${baseline.captureDate}_` : ''}${baseline.id}` : '';
  const area = `${pointParameter(of.aoi.point)}_${of.aoi.radius}m_${of.size}px`;
  return `${date}${survey.id}_${type}${since}_${area}.${format}`;
}

/**
 * The baseline of a DsmChange of `surveys[index]`: the given one if it is older in the list, else
 * the next older survey with DetailDsm, as the server's default picks it from the same order
 * (coverage lists newest first). Undefined when there is none: the change has nothing to compare.
 */
function baselineOf(surveys: Survey[], index: number, chosen: string | undefined): Survey | undefined {
  if (chosen !== undefined) {
    const at = surveys.findIndex((survey) => survey.id === chosen);
    if (at === -1) return { id: chosen } as Survey;
    return at > index ? surveys[at] : undefined;
  }
  return surveys.slice(index + 1).find((survey) => survey.pixelSizes?.DetailDsm !== undefined);
}

/** The images to fetch for these surveys (as coverage returned them, pixelSizes included). */
export function planDownload<T extends ImageryType>(
  surveys: Survey[],
  types: T[],
  format: RasterFormat,
  aoi: Aoi,
  options: PlanOptions = {},
): DownloadPlan<T> {
  const images: PlannedImage<T>[] = [];
  const missing: DownloadPlan<T>['missing'] = [];
  for (const [index, survey] of surveys.entries()) {
    for (const type of types) {
      // A change is on the DetailDsm grid, so it is sized as the after survey's DetailDsm.
      const gsd = survey.pixelSizes?.[type === 'DsmChange' ? 'DetailDsm' : (type as RasterType)];
      const baseline = type === 'DsmChange' ? baselineOf(surveys, index, options.baseline) : undefined;
      if (gsd === undefined || (type === 'DsmChange' && (!baseline || baseline.id === survey.id))) {
        missing.push({ surveyId: survey.id, type });
        continue;
      }
      const size = nativeImageSize(aoi.radius, gsd);
      images.push({
        surveyId: survey.id,
        captureDate: survey.captureDate,
        type,
        format,
        ...(baseline ? { baseline: { id: baseline.id, captureDate: baseline.captureDate } } : {}),
        fileName: imageFileName(survey, type, format, { aoi, size: size.size }, baseline),
        ...size,
      });
    }
  }
  return { images, missing };
}
