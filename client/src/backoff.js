/**
 * Reconnect delay: capped exponential backoff with "equal jitter" — half the
 * step is fixed, half random — so a coordinator restart is not met by every
 * client at the same instant, yet no client retries almost immediately.
 * @param {number} attempt 0 for the first retry
 * @param {{ baseMs: number, maxMs: number }} limits
 * @param {() => number} [random]
 */
export function backoffDelay (attempt, { baseMs, maxMs }, random = Math.random) {
  const step = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30))
  return step / 2 + random() * step / 2
}
