/** The median of repeated measurements and their range, non-finite ones left out. */
export interface Spread {
  median: number;
  low: number;
  high: number;
}

export function spread(values: number[]): Spread {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return { median: Number.NaN, low: Number.NaN, high: Number.NaN };
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, low: sorted[0] as number, high: sorted.at(-1) as number };
}
