import { RASTER_TYPES, type RasterType } from '../../types.js';
import { AREA_OPTIONS, areaOf, asUsage, DATE_OPTIONS, dateFilters, serverCommandLine } from './arguments.js';
import { type Command, clientFor, printJson } from './context.js';
import { rasterTypes } from './download-command.js';

export const coverageCommand: Command = {
  name: 'coverage',
  summary: 'lists the surveys covering an area, newest first, with their pixel sizes',
  usage:
    'nadir-client coverage (--point LON,LAT --radius M | --aoi FILE.geojson) [--types Vert,TrueOrtho,DetailDsm] [--since D] [--until D] [--json]',
  async run(args, context) {
    const { values, settings } = serverCommandLine(
      args,
      { ...AREA_OPTIONS, ...DATE_OPTIONS, types: { type: 'string' } },
      context.env,
    );
    const aoi = await areaOf(values);
    const types: RasterType[] = values.types === undefined ? [...RASTER_TYPES] : rasterTypes(values.types);
    const filters = asUsage(() => ({
      aoi,
      resources: types,
      filter: 'anyTypes' as const,
      ...dateFilters(values),
      limit: 1000,
    }));
    const client = clientFor(settings, context);
    const surveys = [];
    for await (const survey of client.surveys({ ...filters, signal: context.signal })) surveys.push(survey);
    if (values.json) {
      printJson(context, { point: aoi.point, radius: aoi.radius, total: surveys.length, surveys });
      return 0;
    }
    if (surveys.length === 0) {
      context.stdout.write('no survey covers this area\n');
      return 0;
    }
    for (const survey of surveys) {
      const sizes = Object.entries(survey.pixelSizes ?? {})
        .map(([type, gsd]) => `${type} ${gsd} m`)
        .join(', ');
      const tags = survey.tags?.length ? `  [${survey.tags.join(', ')}]` : '';
      context.stdout.write(`${survey.captureDate ?? '?'}  ${survey.id}  ${sizes}${tags}\n`);
    }
    return 0;
  },
};
