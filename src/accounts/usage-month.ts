/**
 * The billing month of an instant: `YYYY-MM` in UTC, so every server instance, whatever its
 * local timezone, puts a transaction in the same month.
 */
export function usageMonthOf(instant: Date): string {
  const year = String(instant.getUTCFullYear()).padStart(4, '0');
  const month = String(instant.getUTCMonth() + 1).padStart(2, '0');
  return `${year}-${month}`;
}
