/**
 * The real client's clocks that the model's hedge race reads, taken from the
 * rule the client runs (policy/hedge-rule.js, its defaults included), not
 * copied: the hedge deadline the client's rule gives a request, and how long
 * it waits for a new peer connection before passing the holder over. The engine and
 * the reference model both read them here.
 */
import { channelPassOverMs, hedgeDeadline, passOverMs, unreached } from '../../policy/hedge-rule.js'

/**
 * Whether a holder would lose the race to the origin asked at the deadline:
 * the client then asks it nothing (the origin at once), so a lost race wastes
 * no upload. The model's peers keep their pace, so the client's estimate of
 * it is the model's truth.
 */
export { outrun } from '../../policy/hedge-rule.js'
import { HEDGE_DEFAULTS } from '../../policy/hedge-rule.js'
import { FLAG_BLOCKING } from './batch.js'

/**
 * Seconds peers may go without a byte before the origin is asked too, for
 * one request, by the client's hedge rule under the replay's preference
 * (`hedge`), for a client that has observed this origin's time to first byte
 * and rate (`originTtfb`, `originRate`).
 * @param {{ hedge: string, originTtfb: number, originRate: number }} config not 'off'
 * @param {number} size bytes
 * @param {import('../../policy/hedge-rule.js').Priority} priority
 * @returns {number} seconds (Infinity: savings first)
 */
export function requestDeadline ({ hedge, originTtfb, originRate }, size, priority) {
  const settings = { hedge: /** @type {import('../../policy/hedge-rule.js').HedgePreference} */ (hedge), hedgeMinMs: HEDGE_DEFAULTS.hedgeMinMs, hedgeMaxMs: HEDGE_DEFAULTS.hedgeMaxMs }
  return hedgeDeadline({ size, priority }, { ttfb: originTtfb * 1000, rate: originRate / 1000 }, settings) / 1000
}

/**
 * When the origin is asked for a request of a client whose last new
 * connections failed `failedInRow` times in a row (none opened since, either
 * way): at once once the client's rule says it is unreached (reach.js, hedge
 * rule `unreached`), peers still tried; else at the deadline. Savings first
 * (no deadline) stays so.
 * @param {number} deadline seconds, from requestDeadline
 * @param {number} failedInRow
 * @returns {number} seconds
 */
export function raceAt (deadline, failedInRow) {
  return deadline < Infinity && unreached(failedInRow) ? 0 : deadline
}

/**
 * A request's priority as the replay sees it: a style, script or font blocks
 * rendering; of the rest, the page view's first `viewportAssets` asset
 * requests are in its first viewport and the others below the fold.
 * @param {number} flags the request's batch flags
 * @param {number} index its place among its page view's asset requests, from 0
 * @param {number} viewportAssets
 * @returns {import('../../policy/hedge-rule.js').Priority}
 */
export function replayPriority (flags, index, viewportAssets) {
  return (flags & FLAG_BLOCKING) !== 0 ? 'blocking' : index < viewportAssets ? 'viewport' : 'later'
}

/**
 * Seconds the client waits for a new peer connection's channel before it
 * passes the holder over: a fifth of `connectTimeoutMs`, or sooner where
 * that is PACE_FACTOR times longer than the page's channels take to open
 * (client/src/peer-fetch.js with hedge-rule.js `passOverMs`; the model's
 * channels open in `setupTime`, and it takes the page to have seen one do so).
 * @param {number} setupTime seconds
 */
export function passOverS (setupTime) {
  return passOverMs(channelPassOverMs(HEDGE_DEFAULTS.connectTimeoutMs), setupTime * 1000) / 1000
}
