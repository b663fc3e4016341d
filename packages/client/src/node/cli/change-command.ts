import { nativeImageSize } from '../../area.js';
import { AREA_OPTIONS, areaOf, asUsage, CliUsageError, serverCommandLine } from './arguments.js';
import { type Command, clientFor, commandTokens, printJson } from './context.js';

const number = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 2 });

export const changeCommand: Command = {
  name: 'change',
  summary: 'what changed between two surveys of an area: height lost and gained (DsmChange figures, one transaction)',
  usage:
    'nadir-client change (--point LON,LAT --radius M | --aoi FILE.geojson) [--after ID] [--baseline ID] [--threshold M] [--json]',
  async run(args, context) {
    const { values, settings } = serverCommandLine(
      args,
      { ...AREA_OPTIONS, after: { type: 'string' }, baseline: { type: 'string' }, threshold: { type: 'string' } },
      context.env,
    );
    const aoi = await areaOf(values);
    let threshold: number | undefined;
    if (values.threshold !== undefined) {
      threshold = /^\s*\d+(\.\d+)?\s*$/.test(values.threshold) ? Number(values.threshold) : Number.NaN;
      if (!(threshold >= 0 && threshold <= 100))
        throw new CliUsageError(`--threshold must be metres from 0 to 100, got ${JSON.stringify(values.threshold)}`);
    }
    // The AOI's token is kept (the user's token file): a second run of the same change is free,
    // as the same AOI's DetailDsm download is (a new coverage token on every run billed each one).
    const tokens = commandTokens(context);
    const client = clientFor(settings, context, { tokenStore: tokens });
    // The coverage call gives the token and the after survey's DetailDsm GSD: the figures are
    // counted at that native resolution, so the areas are the survey's own, not a resampling's.
    const surveys = [];
    const query = { aoi, resources: ['DetailDsm' as const], limit: 1000, signal: context.signal };
    for await (const survey of client.surveys(query)) surveys.push(survey);
    const after = values.after === undefined ? surveys[0] : surveys.find((survey) => survey.id === values.after);
    const gsd = after?.pixelSizes?.DetailDsm;
    if (!after || gsd === undefined) {
      const which = values.after === undefined ? 'no survey' : `survey ${values.after} has no DetailDsm that`;
      context.stderr.write(`nadir-client change: ${which} covers this area\n`);
      return 1;
    }
    await tokens.commit();
    const figures = await client.dsmChangeFigures(
      asUsage(() => ({
        after: after.id,
        aoi,
        size: nativeImageSize(aoi.radius, gsd).size,
        ...(values.baseline === undefined ? {} : { baseline: values.baseline }),
        ...(threshold === undefined ? {} : { threshold }),
      })),
      { signal: context.signal },
    );
    if (values.json) {
      printJson(context, figures);
      return 0;
    }
    const share = Math.round(figures.comparedShare * 100);
    context.stdout.write(
      [
        `after     ${figures.after.captureDate}  ${figures.after.id}`,
        `baseline  ${figures.baseline.captureDate}  ${figures.baseline.id}`,
        `compared  ${number(figures.comparedArea)} m² of ${number(figures.aoiArea)} m² (${share}%), ${figures.groundResolution} m per pixel, threshold ${figures.threshold} m`,
        `lost      ${number(figures.loss.area)} m²  ${number(figures.loss.volume)} m³`,
        `gained    ${number(figures.gain.area)} m²  ${number(figures.gain.volume)} m³`,
        '',
      ].join('\n'),
    );
    return 0;
  },
};
