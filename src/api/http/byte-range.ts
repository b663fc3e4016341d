/**
 * A `Range: bytes=...` request header read against a body of known length (RFC 9110, 14.1.2 and
 * 14.2), for the answers that honour it (rendered imagery, so GDAL's /vsicurl/ reads a file in
 * pieces). One range only: a list of ranges, another unit or a malformed header is ignored (the
 * whole body is sent, as 14.2 allows); a range that starts past the end is unsatisfiable (416).
 */

export type ByteRange = { start: number; end: number } | 'unsatisfiable' | undefined;

const SINGLE = /^bytes=(\d*)-(\d*)$/;

export function byteRange(header: string | undefined, length: number): ByteRange {
  if (header === undefined) return undefined;
  const match = SINGLE.exec(header.trim());
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    // The last N bytes.
    const suffix = Number(last);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, length - suffix), end: length - 1 };
  }
  const start = Number(first);
  if (start >= length) return 'unsatisfiable';
  const end = last === '' ? length - 1 : Number(last);
  if (end < start) return undefined;
  return { start, end: Math.min(end, length - 1) };
}
