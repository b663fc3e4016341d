/**
 * OWS Common 1.1 exception reports (OGC 06-121r3, 8), as WMTS 1.0.0 (OGC 07-057r7, 8.2 and
 * Table 28) answers its failed requests: `<ExceptionReport>` with one `<Exception>` whose
 * `exceptionCode` says what kind of failure it is and `locator` which parameter. The HTTP status
 * follows the standards' tables: 400 for MissingParameterValue, InvalidParameterValue and
 * TileOutOfRange; OperationNotSupported is 400 too, where the table says 501: an operation this
 * server does not offer is the caller's mistake, and nadir answers no bad input with a 5xx; a failure the standards have no code for (a bad
 * API key, the rate limit, the server's own trouble) is NoApplicableCode with the status the rest
 * of the API gives it (decisions.md: 401, 429, 503...). Pure.
 */
import { NadirError } from '../errors.js';

export type OwsExceptionCode =
  | 'MissingParameterValue'
  | 'InvalidParameterValue'
  | 'TileOutOfRange'
  | 'OperationNotSupported'
  | 'NoApplicableCode';

/** The status of each code the standards give one (07-057r7 Table 28, 06-121r3 Table 28). */
const STATUS_OF_CODE: Readonly<Record<Exclude<OwsExceptionCode, 'NoApplicableCode'>, number>> = {
  MissingParameterValue: 400,
  InvalidParameterValue: 400,
  TileOutOfRange: 400,
  OperationNotSupported: 400,
};

/** The content type of a report: OWSLib (and GDAL) look for exceptions in `application/xml` answers. */
export const EXCEPTION_REPORT_TYPE = 'application/xml';

/**
 * A request an OGC client got wrong, as a NadirError (INVALID_PARAMETER, so the JSON answers of
 * the API read it too) that carries its OWS code and locator.
 */
export function owsError(exceptionCode: OwsExceptionCode, locator: string, message: string): NadirError {
  return new NadirError('INVALID_PARAMETER', message, { parameter: locator, exceptionCode });
}

/** The tile core's parameter names (tile-query.ts) as WMTS names them. */
const WMTS_LOCATORS: Readonly<Record<string, string>> = {
  layer: 'LAYER',
  Time: 'TIME',
  time: 'TIME',
  z: 'TILEMATRIX',
  row: 'TILEROW',
  x: 'TILECOL',
  y: 'TILEROW',
  format: 'FORMAT',
  file: 'TILECOL',
};

export interface OwsException {
  status: number;
  exceptionCode: OwsExceptionCode;
  locator: string | undefined;
  text: string;
}

/**
 * The exception of a failure the error table already worded (error-table.ts `failure`): its
 * status and `{error, code, parameter?, exceptionCode?}` body.
 */
export function owsExceptionOf(status: number, body: { error: string; [detail: string]: unknown }): OwsException {
  const parameter = typeof body.parameter === 'string' ? body.parameter : undefined;
  const locator =
    parameter === undefined
      ? undefined
      : Object.hasOwn(WMTS_LOCATORS, parameter)
        ? WMTS_LOCATORS[parameter]
        : parameter;
  const given = body.exceptionCode as OwsExceptionCode | undefined;
  if (given !== undefined && given !== 'NoApplicableCode') {
    return { status: STATUS_OF_CODE[given], exceptionCode: given, locator, text: body.error };
  }
  if (status === 400) {
    const missing = /^Missing required parameter/.test(body.error);
    return {
      status,
      exceptionCode: missing ? 'MissingParameterValue' : 'InvalidParameterValue',
      locator,
      text: body.error,
    };
  }
  return { status, exceptionCode: 'NoApplicableCode', locator: undefined, text: body.error };
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The report's XML (the body of the answer). */
export function exceptionReport({ exceptionCode, locator, text }: OwsException): string {
  const located = locator === undefined ? '' : ` locator="${escapeXml(locator)}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<ExceptionReport xmlns="http://www.opengis.net/ows/1.1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.opengis.net/ows/1.1 http://schemas.opengis.net/ows/1.1.0/owsExceptionReport.xsd" version="1.0.0" xml:lang="en">',
    `<Exception exceptionCode="${exceptionCode}"${located}><ExceptionText>${escapeXml(text)}</ExceptionText></Exception>`,
    '</ExceptionReport>',
    '',
  ].join('\n');
}
