/**
 * Retry delay: capped exponential backoff with "equal jitter" — half the step
 * is fixed, half random — so a restarted coordinator or Redis is not met by
 * every client at the same instant, yet no client retries almost at once.
 * Used for the client's coordinator reconnects and the coordinator's Redis
 * reconnects.
 *
 * @param {number} attempt 0 for the first retry
 * @param {{ baseMs: number, maxMs: number }} limits first step and cap
 * @param {() => number} [random] uniform in [0, 1)
 * @returns {number} ms to wait
 */
export function backoffDelay (attempt, { baseMs, maxMs }, random = Math.random) {
  const step = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30))
  return step / 2 + random() * step / 2
}
