/**
 * The real client's clocks that the model's hedge race reads, taken from the
 * client's own code (client/src/hedge.js, client/src/config.js), not copied:
 * the hedge deadline the client computes from the origin's time to first
 * byte, and how long it waits for a new peer connection before passing the
 * holder over (client/src/peer-fetch.js: a fifth of `connectTimeoutMs`). The
 * engine and the reference model both read them here.
 */
import { OriginClock } from '../../client/src/hedge.js'
import { DEFAULTS as CLIENT_DEFAULTS } from '../../client/src/config.js'

/**
 * Seconds peers may go without a byte before the origin is asked too, for a
 * client that has observed this origin time to first byte: the client's
 * `OriginClock` (HEDGE_FACTOR × TTFB, within hedgeMinMs … hedgeMaxMs).
 * @param {number} originTtfb seconds
 * @returns {number} seconds
 */
export function hedgeDeadline (originTtfb) {
  const clock = new OriginClock(CLIENT_DEFAULTS)
  clock.observe(originTtfb * 1000)
  return clock.deadline() / 1000
}

/** Seconds the client waits for a new peer connection's channel before it passes the holder over (and reports `no_channel`). */
export const PASS_OVER_S = CLIENT_DEFAULTS.connectTimeoutMs / 5 / 1000
