/**
 * Hedged loads: peers first, the origin as soon as waiting for peers would
 * cost this request more than the site wants to pay for its bytes. The
 * origin fetch starts when the peer side gives up (no holder, no
 * coordinator: at once), or when no peer bytes have arrived for the hedge
 * deadline, which the hedge rule (policy/hedge-rule.js, shared with the simulator)
 * sets from the request and the origin's observed speed. The first result
 * wins; the loser's signal aborts (an origin fetch is cancelled, a peer
 * request sends `cancel`). An origin that begins to answer once peers have
 * given up (nobody holds it, no coordinator, every holder failed or would
 * lose: the same who-wins as ever) is the only source (`commit`), and its
 * bytes may be passed on as they come rather than once the last has
 * (loader.js `stream`). While peers are still at it, quiet or not, the first
 * complete copy wins: a far origin's large image may yet lose to a holder
 * whose channel opened late, and a transfer nearly done is not thrown away.
 */
import { hedgeDeadline, smooth } from '../../policy/hedge-rule.js'

/** @typedef {'race' | 'deadline' | 'peers'} Asked why a request's origin fetch began (see hedge) */

/** How often a waiting request's deadline is read again, ms at most. */
const RECHECK_MS = 100

/** The origin's speed as observed, smoothed, and the hedge deadline it gives a request. */
export class OriginClock {
  /** @param {import('../../policy/hedge-rule.js').HedgeSettings} settings */
  constructor (settings) {
    this.settings = settings
    /** @type {import('../../policy/hedge-rule.js').OriginSpeed} smoothed, null before the first observation */
    this.speed = { ttfb: null, rate: null }
  }

  /** @param {number} ms one origin response's time to first byte */
  observe (ms) {
    if (ms >= 0) this.speed.ttfb = smooth(this.speed.ttfb, ms)
  }

  /**
   * @param {number} bytes one origin response's body
   * @param {number} ms from its first byte to its last
   */
  observeBody (bytes, ms) {
    // A body that came in one read says nothing about the rate.
    if (bytes > 0 && ms > 1) this.speed.rate = smooth(this.speed.rate, bytes / ms)
  }

  /**
   * How long peers may go without delivering a byte before the origin is asked too.
   * @param {import('../../policy/hedge-rule.js').HedgeRequest} [request] default: an image of unknown size in the viewport
   */
  deadline (request = { size: 0, priority: 'viewport' }) {
    return hedgeDeadline(request, this.speed, this.settings)
  }
}

/**
 * Race peers against the origin, the origin starting late (see above).
 * @template T
 * @param {(how: { signal: AbortSignal, onBytes: () => void, sooner: (fromMs: number, toMs: number) => void, race: () => void }) => Promise<T | null>} peers
 *   verified bytes from peers, or null when they cannot give them; `onBytes` on every frame that arrives;
 *   `sooner` when the request's deadline has just shortened for a reason that holds from now on (its
 *   page placed it in view): the new one counts from now, but ends no later than the old one would have;
 *   `race` to ask the origin now, whatever the deadline (the first complete copy still wins)
 * @param {(signal: AbortSignal, commit: () => boolean) => Promise<T>} origin its `commit()`, called as
 *   its answer begins: whether it is the only source from now on (peers gave up)
 * @param {() => number} deadline ms, read again at each check (what the rule knows of the request may grow)
 * @returns {Promise<{ value: T, from: 'peer' | 'origin', asked?: Asked }>} `asked`: why the origin was
 *   asked, when it was (`race`: at once, by `race()`; `deadline`: peers quiet for the deadline; `peers`:
 *   they gave up)
 */
export function hedge (peers, origin, deadline) {
  return new Promise((resolve, reject) => {
    const fromPeers = new AbortController()
    const fromOrigin = new AbortController()
    let quietSince = performance.now()
    let settled = false
    let peersDone = false
    /** @type {unknown} */
    let originFailed = null
    /** @type {Asked | undefined} */
    let asked
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer

    /** @param {T} value @param {'peer' | 'origin'} from */
    const win = (value, from) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      ;(from === 'peer' ? fromOrigin : fromPeers).abort(new DOMException('the other source won', 'AbortError'))
      resolve({ value, from, ...(asked && { asked }) })
    }
    const fail = () => {
      if (settled || !peersDone || !originFailed) return
      settled = true
      reject(originFailed)
    }
    const startOrigin = (/** @type {Asked} */ why) => {
      clearTimeout(timer)
      if (asked) return
      asked = why
      origin(fromOrigin.signal, commit).then((v) => win(v, 'origin'), (err) => {
        originFailed = err ?? new Error('origin failed')
        fail()
      })
    }
    const commit = () => !settled && peersDone
    const check = () => {
      // The deadline first: reading it may restart the quiet time (a request its page now places in view).
      const ms = deadline()
      const quiet = performance.now() - quietSince
      if (quiet >= ms) startOrigin('deadline')
      // Looked at again at least every RECHECK_MS: the request's priority may change meanwhile (its
      // page says where its image lies), and with it the deadline.
      else timer = setTimeout(check, Math.min(ms - quiet, RECHECK_MS))
    }
    check()
    const peersGaveUp = () => {
      peersDone = true
      startOrigin('peers')
      fail()
    }
    const onBytes = () => { quietSince = performance.now() }
    // quietSince + toMs = min(now + toMs, quietSince + fromMs): more urgent never means the origin later.
    const sooner = (/** @type {number} */ fromMs, /** @type {number} */ toMs) => {
      quietSince = Math.min(performance.now(), quietSince + fromMs - toMs)
    }
    peers({ signal: fromPeers.signal, onBytes, sooner, race: () => startOrigin('race') }).then((v) => v ? win(v, 'peer') : peersGaveUp(), peersGaveUp)
  })
}
