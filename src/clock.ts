/**
 * Where every part of nadir reads the time: token issue and expiry, account and key dates, the
 * billing month, ingest stamps, rate-limit windows, relative date filters ("30D" before today).
 * One is made in the composition root (the system clock in production, a settable one in tests)
 * and handed down; no component reads the wall clock on its own, so a service cannot run on two
 * clocks at once.
 */
export type Clock = () => Date;
