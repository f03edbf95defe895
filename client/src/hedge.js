/**
 * Hedged loads: peers first, the origin as soon as peers look slower than it.
 * The origin fetch starts when the peer side gives up (no holder, no
 * coordinator: at once), or when no peer bytes have arrived for the hedge
 * deadline: twice the origin's observed time to first byte, bounded by
 * `hedgeMinMs` / `hedgeMaxMs`. The first result wins; the loser's signal
 * aborts (an origin fetch is cancelled, a peer request sends `cancel`).
 */

/** The hedge deadline is this many times the origin's smoothed time to first byte. */
export const HEDGE_FACTOR = 2

/** The origin's time to first byte as observed, smoothed, and the hedge deadline it gives. */
export class OriginClock {
  /** @param {{ hedgeMinMs: number, hedgeMaxMs: number }} bounds */
  constructor (bounds) {
    this.bounds = bounds
    /** @type {number | null} smoothed ms, null before the first observation */
    this.ttfb = null
  }

  /** @param {number} ms one origin response's time to first byte */
  observe (ms) {
    if (!(ms >= 0)) return
    this.ttfb = this.ttfb === null ? ms : 0.75 * this.ttfb + 0.25 * ms
  }

  /** How long peers may go without delivering a byte before the origin is asked too. */
  deadline () {
    const { hedgeMinMs, hedgeMaxMs } = this.bounds
    return this.ttfb === null ? hedgeMaxMs : Math.min(hedgeMaxMs, Math.max(hedgeMinMs, HEDGE_FACTOR * this.ttfb))
  }
}

/**
 * Race peers against the origin, the origin starting late (see above).
 * @template T
 * @param {(signal: AbortSignal, onBytes: () => void) => Promise<T | null>} peers
 *   verified bytes from peers, or null when they cannot give them; `onBytes` on every frame that arrives
 * @param {(signal: AbortSignal) => Promise<T>} origin
 * @param {number} deadlineMs
 * @returns {Promise<{ value: T, from: 'peer' | 'origin' }>}
 */
export function hedge (peers, origin, deadlineMs) {
  return new Promise((resolve, reject) => {
    const fromPeers = new AbortController()
    const fromOrigin = new AbortController()
    let quietSince = performance.now()
    let settled = false
    let peersDone = false
    /** @type {unknown} */
    let originFailed = null
    let originStarted = false
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer

    /** @param {T} value @param {'peer' | 'origin'} from */
    const win = (value, from) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      ;(from === 'peer' ? fromOrigin : fromPeers).abort(new DOMException('the other source won', 'AbortError'))
      resolve({ value, from })
    }
    const fail = () => {
      if (settled || !peersDone || !originFailed) return
      settled = true
      reject(originFailed)
    }
    const startOrigin = () => {
      clearTimeout(timer)
      if (originStarted) return
      originStarted = true
      origin(fromOrigin.signal).then((v) => win(v, 'origin'), (err) => {
        originFailed = err ?? new Error('origin failed')
        fail()
      })
    }
    const check = () => {
      const quiet = performance.now() - quietSince
      if (quiet >= deadlineMs) startOrigin()
      else timer = setTimeout(check, deadlineMs - quiet)
    }
    timer = setTimeout(check, deadlineMs)
    const peersGaveUp = () => {
      peersDone = true
      startOrigin()
      fail()
    }
    peers(fromPeers.signal, () => { quietSince = performance.now() }).then((v) => v ? win(v, 'peer') : peersGaveUp(), peersGaveUp)
  })
}
