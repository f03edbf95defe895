/**
 * The hedge rule: for one request, how long peers may go without sending a
 * byte before the origin is asked too (the hedge deadline), from what each
 * side would cost in time for this request and what the site prefers
 * (`data-hedge`). The client's loads (client/src/hedge.js, loader.js,
 * peer-fetch.js) and the simulator's replay (sim/src/client-timing.js) both
 * take it from here, defaults included (HEDGE_DEFAULTS), so neither can
 * change it alone.
 *
 * R, the race point, is HEDGE_FACTOR × the origin's observed time to first
 * byte (hedgeMaxMs before any is observed): no sooner can a quiet peer side
 * be told apart from an origin that is merely answering.
 *
 *   latency   every request: R (peers win only the races they win outright)
 *   balanced  the default. A render-blocking request (script, style, font): R.
 *             An image in the viewport: R + the time the origin would take to
 *             send its bytes (size ÷ the origin's observed rate), so a large
 *             one gives peers the time its own download would cost. Below the
 *             fold: hedgeMaxMs, time for a channel to open, since
 *             nobody waits on it yet.
 *   savings   the origin only when peers give up (no holder, no channel within
 *             the pass-over, a stall, bad bytes): no deadline
 *
 * latency and balanced stay within hedgeMinMs … hedgeMaxMs. The deadline
 * only runs while peers send nothing (every peer byte restarts it, and so
 * does handing the request to its first holder; an image that counted below
 * the fold until its page placed it in view gets the viewport's deadline
 * from then, unless the one it had ends sooner: loader.js), and
 * asking the origin does not stop the peers: the first complete copy wins,
 * so a peer transfer nearly done is not thrown away for the origin's.
 *
 * A holder about to be asked that its page's pace says would lose the race
 * anyway (outrun) is not asked: the origin is, at once.
 *
 * Among holders, peers are measured against peers (passOverMs): a holder
 * whose channel takes PACE_FACTOR times longer to open than this page's
 * channels have taken, or that leaves a request without a byte PACE_FACTOR
 * times longer than this page's holders take to answer, is passed over for
 * the next holder, sooner than the hedge deadline. So a liar that never opens
 * a channel, or opens one and never answers, costs the page about an honest
 * holder's answer time, not the deadline.
 */

/** The race point is this many times the origin's smoothed time to first byte. */
export const HEDGE_FACTOR = 2

/** What a site may prefer (`data-hedge`); the first, `balanced`, is the default. */
export const HEDGE_PREFERENCES = /** @type {const} */ (['balanced', 'latency', 'savings'])

/**
 * The defaults of the client settings this rule reads (client/src/config.js
 * takes them from here; README "Configuration" says what each means), which
 * the simulator replays: the site's preference, the deadline's bounds, and
 * the connect timeout a new channel's pass-over is a fifth of
 * (channelPassOverMs).
 */
const hedgeDefaults = {
  hedge: /** @type {HedgePreference} */ (HEDGE_PREFERENCES[0]),
  hedgeMinMs: 100,
  hedgeMaxMs: 1500,
  connectTimeoutMs: 5000
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const HEDGE_DEFAULTS = Object.freeze(hedgeDefaults)

/** How a page needs a request: it blocks rendering, it shows in the first viewport, or it can come later. */
export const PRIORITIES = /** @type {const} */ (['blocking', 'viewport', 'later'])

/**
 * @typedef {typeof HEDGE_PREFERENCES[number]} HedgePreference
 * @typedef {typeof PRIORITIES[number]} Priority
 * @typedef {{ size: number, priority: Priority }} HedgeRequest `size` in bytes, 0 when unknown
 * @typedef {{ ttfb: number | null, rate: number | null }} OriginSpeed smoothed ms to first byte and bytes per ms, null before the first observation
 * @typedef {{ hedge: HedgePreference, hedgeMinMs: number, hedgeMaxMs: number }} HedgeSettings
 */

/**
 * @param {HedgeRequest} request
 * @param {OriginSpeed} origin
 * @param {HedgeSettings} settings
 * @returns {number} ms peers may send nothing before the origin is asked too (Infinity: only when they give up)
 */
export function hedgeDeadline ({ size, priority }, { ttfb, rate }, { hedge, hedgeMinMs, hedgeMaxMs }) {
  if (hedge === 'savings') return Infinity
  if (ttfb === null) return hedgeMaxMs
  let ms = HEDGE_FACTOR * ttfb
  if (hedge === 'balanced') {
    if (priority === 'later') ms = hedgeMaxMs
    else if (priority === 'viewport' && rate) ms += size / rate
  }
  return Math.min(hedgeMaxMs, Math.max(hedgeMinMs, ms))
}

/**
 * How long the origin would take to send a request whole, as this client
 * has seen it answer: its time to first byte and the body at its rate.
 * @param {number} size bytes, 0 when unknown
 * @param {OriginSpeed} origin
 * @returns {number | null} ms; null before the origin has been seen to answer
 */
export function originMs (size, { ttfb, rate }) {
  return ttfb === null ? null : ttfb + (rate ? size / rate : 0)
}

/**
 * Whether a holder about to be asked for a request would lose the race to
 * the origin anyway: it is expected to deliver the request whole (`peerMs`,
 * from its page's pace: the time its holders take to answer and the rate
 * they send at) no sooner than the origin would, asked at the hedge
 * deadline (`deadlineMs + originMs`). Then the request goes to the origin at
 * once: the holder uploads nothing to be thrown away, and the page does not
 * wait out the deadline first. Unknowns (null) never outrun a holder.
 * @param {number | null} peerMs
 * @param {number} deadlineMs the hedge deadline (Infinity under `savings`: never)
 * @param {number | null} originMs
 */
export function outrun (peerMs, deadlineMs, originMs) {
  return peerMs !== null && originMs !== null && peerMs >= deadlineMs + originMs
}

/**
 * A visitor whose last this-many channel attempts all failed to open (none
 * opened since, either way) is taken to be behind a NAT no peer traverses:
 * its requests race the origin at once (hedge `latency` and `balanced`),
 * while peers are still tried, so that a channel that opens clears it, and
 * its pages list nothing (reach.js). With one holder in ten behind such a
 * NAT, three failures in a row are a one-in-a-thousand event for a visitor
 * that is not.
 */
export const UNREACHED_AFTER = 3

/**
 * @param {number} failedInRow channel attempts in a row that did not open
 * @returns {boolean} whether the visitor races the origin at once
 */
export function unreached (failedInRow) {
  return failedInRow >= UNREACHED_AFTER
}

/**
 * A new channel not open within a fifth of the connect timeout counts as not
 * opened: its holder is passed over (peer-fetch.js), and the visitor counts
 * it against its own reach (peer-pool.js).
 * @param {number} connectTimeoutMs
 */
export function channelPassOverMs (connectTimeoutMs) {
  return connectTimeoutMs / 5
}

/** A holder this many times slower than the page's peers (to open a channel, or to answer) is passed over. */
export const PACE_FACTOR = 4
/** …but never sooner than this: a holder's first answer may need its store opened. */
export const PASS_OVER_FLOOR_MS = 150

/**
 * How long one holder may keep a request waiting (for its channel to open,
 * or for a byte once asked) before the request goes on to the next holder.
 * @param {number} capMs the longest: the hedge deadline (for an answer), the connect pass-over (for a channel)
 * @param {number | null} paceMs how long this page's peers have taken to do the same, smoothed; null before any did
 * @returns {number} ms
 */
export function passOverMs (capMs, paceMs) {
  return paceMs === null || !(paceMs >= 0) ? capMs : Math.min(capMs, Math.max(PASS_OVER_FLOOR_MS, PACE_FACTOR * paceMs))
}

/**
 * Smoothed observations (the origin's speed, peers' pace): a quarter of each new one.
 * @param {number | null} was null before the first
 * @param {number} now
 */
export const smooth = (was, now) => was === null ? now : 0.75 * was + 0.25 * now

/**
 * Where a page's images lie, as its page has said (`later`): placed below
 * the first viewport, placed in it, and whether some are not placed yet.
 * @typedef {{ below: Set<string>, above: Set<string>, placing: boolean }} Placement
 */

/**
 * Whether an image counts as below the fold: placed there, or not placed
 * yet while its page is still placing its images (a request is not raced
 * with the origin for want of knowing where its image lies). Once the page
 * has placed them all, one it never placed (a CSS background, an image added
 * later) counts as in view.
 * @param {Placement} placement
 * @param {string} url
 */
export function belowFold ({ below, above, placing }, url) {
  return below.has(url) || (placing && !above.has(url))
}

/**
 * A request's priority from its Fetch `destination` and where the page says
 * its element is: scripts, styles and fonts block rendering; anything else
 * (images, fetches, CSS backgrounds) counts as in the viewport unless the
 * page has said it is below the fold.
 * @param {string} destination `Request.destination` ('' for fetch())
 * @param {boolean} later the page listed it below the fold
 * @returns {Priority}
 */
export function priorityOf (destination, later) {
  if (destination === 'script' || destination === 'style' || destination === 'font') return 'blocking'
  return later ? 'later' : 'viewport'
}
