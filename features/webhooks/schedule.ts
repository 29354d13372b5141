/** At most this share of a wait is added at random, so deliveries failing together do not retry in step. */
const JITTER = 0.2;

/**
 * How long to wait after the `attempt`-th attempt of a delivery's round (1 for
 * the first) failed, from the schedule of waits; null when it was the last.
 */
export function retryDelayMs(schedule: readonly number[], attempt: number, random: () => number = Math.random): number | null {
  const wait = schedule[attempt - 1];
  if (wait === undefined) return null;
  return Math.round(wait * (1 + JITTER * random()));
}
