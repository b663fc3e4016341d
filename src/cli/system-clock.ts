import type { Clock } from '../clock.js';

/**
 * The wall clock: what `nadir` runs on. The CLI hands it to what it builds (the composition root,
 * the stores); nothing else in the service reads the time on its own.
 */
export const systemClock: Clock = () => new Date();
