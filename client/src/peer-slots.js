/**
 * Which peer's channel carries each of the page's requests, and when. A
 * page asks for all its images at once; sent at once, they would queue on
 * each channel in the order they were made, and the viewport's small images
 * would wait behind a large one on one channel while another channel stood
 * idle. Instead a channel takes a request only while what it still owes the
 * page (the bytes of its requests not yet come) is under a window (what it
 * carries in a round trip, WINDOW_BYTES at least), at most
 * SLOTS_PER_PEER at a time, or when it carries none: enough that the next
 * reply is asked for before the last one ends, and no more. A request
 * goes to the candidate that owes the least, among those the caller ranks
 * best (open channels before new ones, quiet holders last), and otherwise
 * waits here for the first of its holders to take one more, the most urgent
 * first (render-blocking, then the viewport, then the rest; then in the
 * order they came): whichever holder is nearly done first takes the next
 * request it can serve, and images below the fold never queue ahead of the
 * viewport's. Nor do they share the peers with it: while a request the page
 * needs now (render-blocking or in the viewport) is on its way from peers
 * (urgent), requests below the fold wait for a free slot on a channel that
 * carries an urgent request, and take none on another. A page's
 * channels share one sender's uplink, and on this project's machine one
 * receiving browser's processing too (three fresh channels in Firefox
 * carried 5 MB/s together, one alone as much), so a below-the-fold image sent
 * beside the viewport's last large one delays it by its own bytes; queued on
 * a channel behind the urgent replies it carries, it delays none of them (a
 * channel's replies come in order) and keeps that channel busy to their end: a
 * channel left idle behind its last reply recovers a packet lost at that
 * reply's end only after a retransmission timeout (the tail of 3 visits in
 * 20 of bench/page-load.js: one reply of 20–60 KB taking 440–540 ms), where
 * packets behind it have the loss noticed within a round trip.
 * A waiting request hears of its holders' bytes (and, while held back
 * for the urgent ones, of any peer's): they are busy, not quiet, so its hedge
 * deadline starts again.
 */

/** Requests one peer's channel carries at once, at most. */
export const SLOTS_PER_PEER = 3
/**
 * A channel that owes less than this takes another request (bytes), at
 * least: the next reply is asked for this much before the last one ends, so
 * a holder's replies follow each other without a gap. The caller widens it
 * to what its channels carry in a round trip (peer-fetch.js).
 */
export const WINDOW_BYTES = 64 << 10

/** Waiting requests hear of their holders' bytes at most this often (ms). */
const BUSY_EVERY_MS = 10

/** @type {Record<import('../../policy/hedge-rule.js').Priority, number>} */
const RANK = { blocking: 0, viewport: 1, later: 2 }

/** @param {() => import('../../policy/hedge-rule.js').Priority} priority whether the page needs it now (render-blocking or in the viewport) */
const urgent = (priority) => priority() !== 'later'

/**
 * @typedef {import('../../policy/hedge-rule.js').Priority} Priority
 * @typedef {{ peers: string[], priority: () => Priority, bytes: number, onBytes: () => void, resolve: (peer: string | null) => void }} Waiting
 */

export class PeerSlots {
  /** @type {number} */
  #perPeer
  /** @type {Map<string, { n: number, owed: number, u: number }>} by peer: its slots in use, the bytes still to come of their
   * replies, and how many of them the page needed now when they took their slot */
  #load = new Map()
  /** @type {Waiting[]} in the order they came */
  #waiting = []
  /** @type {Map<string, number>} when the requests waiting for each peer last heard of its bytes */
  #heard = new Map()
  /** @type {Set<{ priority: () => Priority }>} the page's requests on their way from peers (begin), by how it needs each now */
  #active = new Set()

  /** @type {(peer: string) => number | null} */
  #spare
  /** @type {(peer: string) => number} */
  #rank
  /** @type {() => number} */
  #window

  /**
   * @param {object} [o]
   * @param {number} [o.perPeer] requests one channel carries at once, at most
   * @param {() => number} [o.window] a channel takes another request while it owes fewer bytes than this
   * @param {(peer: string) => number | null} [o.spare] offered each slot that frees before the waiting
   *   requests: the bytes of the request held up elsewhere that took it, or null when none did
   * @param {(peer: string) => number} [o.rank] how the caller ranks a candidate (lower is better): a
   *   request goes to the best ranked of its free candidates, then the one that owes least
   */
  constructor ({ perPeer = SLOTS_PER_PEER, window = () => WINDOW_BYTES, spare = () => null, rank = () => 0 } = {}) {
    this.#perPeer = perPeer
    this.#window = window
    this.#spare = spare
    this.#rank = rank
  }

  /** @param {string} peer whether its channel takes another request now */
  #free (peer) {
    const l = this.#load.get(peer)
    return !l || (l.n < this.#perPeer && l.owed < this.#window())
  }

  /** @param {string} peer @param {number} bytes @param {boolean} [urgent] a request (urgent: the page needs it now) takes one of its slots */
  #hold (peer, bytes, urgent) {
    const l = this.#load.get(peer)
    if (!l) this.#load.set(peer, { n: 1, owed: bytes, u: +!!urgent })
    else {
      l.n++
      l.owed += bytes
      l.u += +!!urgent
    }
  }

  /**
   * A slot on the best of `peers` that takes a request now (see above), or on
   * the first that does once it can.
   * @param {string[]} peers candidates, preferred first among equals
   * @param {Priority | (() => Priority)} priority how the page needs it (read again while it waits: where
   *   its image lies may become known meanwhile)
   * @param {{ signal: AbortSignal, onBytes: () => void, bytes?: number }} how `bytes`: the reply's size, as far as known
   * @returns {Promise<string | null>} the peer whose slot it holds (give it back), or null: aborted, or every candidate dropped
   */
  take (peers, priority, { signal, onBytes, bytes = 0 }) {
    const now = typeof priority === 'function' ? priority : () => priority
    // A free slot has nobody waiting for it but requests held back for the urgent ones.
    let best
    for (const p of peers) {
      if (!this.#free(p) || this.#heldBack(now, p)) continue
      if (best === undefined || this.#better(p, best)) best = p
    }
    if (best !== undefined) {
      this.#hold(best, bytes, urgent(now))
      return Promise.resolve(best)
    }
    if (signal.aborted || !peers.length) return Promise.resolve(null)
    return new Promise((resolve) => {
      const w = { peers, priority: now, bytes, onBytes, resolve }
      this.#waiting.push(w)
      signal.addEventListener('abort', () => this.#leave(w, null), { once: true })
    })
  }

  /**
   * A request of the page's is on its way from peers, from its lookup until
   * it ends (the function returned, called once): while it is one the page
   * needs now (`priority()` render-blocking or in the viewport), requests
   * below the fold take no idle channel.
   * @param {() => Priority} priority
   * @returns {() => void}
   */
  begin (priority) {
    const request = { priority }
    this.#active.add(request)
    return () => {
      if (!this.#active.delete(request)) return
      for (const peer of new Set(this.#waiting.flatMap((w) => w.peers))) this.#fill(peer)
    }
  }

  /**
   * Whether a request so needed waits now, for the page's urgent ones, rather than take a slot on `peer`'s channel.
   * @param {() => Priority} priority
   * @param {string} peer
   */
  #heldBack (priority, peer) {
    return !urgent(priority) && !this.#load.get(peer)?.u && this.#pressing()
  }

  /** whether a request the page needs now is on its way from peers */
  #pressing () {
    for (const r of this.#active) if (urgent(r.priority)) return true
    return false
  }

  /** @param {string} peer the most urgent request waiting for it, then the oldest */
  #next (peer) {
    /** @type {Waiting | undefined} */
    let best
    let rank = Infinity
    for (const w of this.#waiting) {
      if (!w.peers.includes(peer)) continue
      const r = RANK[w.priority()]
      if (r < rank) [best, rank] = [w, r]
    }
    return best
  }

  /** @param {string} a @param {string} b whether `a` beats `b`: ranked better, or as well and owing less */
  #better (a, b) {
    return (this.#rank(a) - this.#rank(b) || (this.#load.get(a)?.owed ?? 0) - (this.#load.get(b)?.owed ?? 0)) < 0
  }

  /**
   * A request on `peer` has ended (or given its slot up unused).
   * @param {string} peer
   * @param {number} [unsent] bytes of its reply that did not come (all of them when it was not asked)
   * @param {() => Priority} [priority] how the page needs it (read again: one whose image was placed
   *   elsewhere meanwhile is counted as it is now, never below none)
   */
  give (peer, unsent = 0, priority) {
    const l = this.#load.get(peer)
    if (l && --l.n) {
      l.owed = Math.max(0, l.owed - unsent)
      if (priority && urgent(priority)) l.u = Math.max(0, l.u - 1)
    } else this.#load.delete(peer)
    this.#fill(peer)
  }

  /**
   * Bytes of a reply came from `peer` (counted against the request's size: at most what it said it owed).
   * @param {string} peer
   * @param {number} bytes
   */
  sent (peer, bytes) {
    const l = this.#load.get(peer)
    if (!l) return
    const was = this.#free(peer)
    l.owed = Math.max(0, l.owed - bytes)
    if (!was) this.#fill(peer)
  }

  /** @param {string} peer its channel may take more: a request held up elsewhere (spare) first, then the most urgent waiting for it */
  #fill (peer) {
    while (this.#free(peer)) {
      const spare = this.#spare(peer)
      if (spare !== null) {
        this.#hold(peer, spare)
        continue
      }
      const w = this.#next(peer)
      if (!w || this.#heldBack(w.priority, peer)) return
      this.#hold(peer, w.bytes, urgent(w.priority))
      this.#leave(w, peer)
    }
  }

  /**
   * Bytes came from `peer`: the requests waiting for it hear of them, at most
   * once per BUSY_EVERY_MS (a hedge's quiet time needs no finer news; told of
   * every frame, for every request on the channel, the waiting requests took
   * 46 ms of a page's main thread over the shop's 40 images).
   * @param {string} peer
   */
  busy (peer) {
    const now = performance.now()
    if (now - (this.#heard.get(peer) ?? -Infinity) < BUSY_EVERY_MS) return
    this.#heard.set(peer, now)
    // Read once for all of them: this runs as bytes come.
    const pressing = this.#pressing()
    for (const w of this.#waiting) if (w.peers.includes(peer) || (pressing && !urgent(w.priority))) w.onBytes()
  }

  /** @param {string} peer dropped: no request waits for it any more (one left with no candidate gets null) */
  drop (peer) {
    this.#heard.delete(peer)
    for (const w of [...this.#waiting]) {
      w.peers = w.peers.filter((p) => p !== peer)
      if (!w.peers.length) this.#leave(w, null)
    }
  }

  /** @param {string} peer gone quiet: requests that have another candidate stop waiting for it */
  avoid (peer) {
    for (const w of this.#waiting) if (w.peers.length > 1) w.peers = w.peers.filter((p) => p !== peer)
  }

  /** @param {Waiting} w @param {string | null} peer */
  #leave (w, peer) {
    const at = this.#waiting.indexOf(w)
    if (at !== -1) this.#waiting.splice(at, 1)
    w.resolve(peer)
  }
}
