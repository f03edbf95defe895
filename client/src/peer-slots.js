/**
 * How many of the page's requests each peer's channel carries at once, and
 * which waiting request goes next. A page asks for all its images at once;
 * sent at once, they would queue on each channel in the order they were
 * made, and a holder that is slower than the others would keep its share of
 * the first viewport waiting. Instead each peer takes a few at a time, and a
 * request waits here for the first of its holders with a free slot, the most
 * urgent first (render-blocking, then the viewport, then the rest; then in
 * the order they came): whichever holder finishes first takes the next
 * request it can serve, and images below the fold never queue ahead of the
 * viewport's. A waiting request hears of its holders' bytes: they are busy,
 * not quiet, so its hedge deadline starts again.
 *
 * A request goes to a holder whose channel is open, or to one with no
 * channel yet (its request starts one); not to one whose channel is still
 * being set up while another of its holders has one open, and otherwise only
 * once it has waited `patienceMs` for one of them to open. A holder whose
 * channel never opens (behind a NAT nobody reaches, or a liar) then keeps no
 * request waiting while the others serve: the page's first requests, made
 * while every channel is still opening, go to the first channels that open.
 */

/** Requests one peer's channel carries at once: enough that it always has the next one to read and send. */
export const SLOTS_PER_PEER = 3

/** Waiting requests hear of their holders' bytes at most this often (ms). */
const BUSY_EVERY_MS = 10

/** @type {Record<import('../../policy/hedge-rule.js').Priority, number>} */
const RANK = { blocking: 0, viewport: 1, later: 2 }

/** @typedef {'open' | 'opening' | 'none'} ChannelState a holder's channel: open, being set up, or neither */
/** @typedef {{ peers: string[], rank: number, seq: number, until: number, onBytes: () => void, resolve: (peer: string | null) => void }} Waiting `until`: from then it may take a channel still being set up */

export class PeerSlots {
  /** @type {number} */
  #perPeer
  /** @type {(peer: string) => ChannelState} */
  #state
  /** @type {Map<string, number>} slots in use, by peer */
  #used = new Map()
  /** @type {Waiting[]} most urgent first */
  #waiting = []
  #seq = 0
  /** @type {Map<string, number>} when the requests waiting for each peer last heard of its bytes */
  #heard = new Map()

  /**
   * @param {number} [perPeer]
   * @param {(peer: string) => ChannelState} [state] where each holder's channel is (default: none yet, for all)
   */
  constructor (perPeer = SLOTS_PER_PEER, state = () => 'none') {
    this.#perPeer = perPeer
    this.#state = state
  }

  /**
   * A slot on the first of `peers` that has one free, now or once one frees.
   * @param {string[]} peers candidates, preferred first
   * @param {import('../../policy/hedge-rule.js').Priority} priority
   * @param {{ signal: AbortSignal, onBytes: () => void, patienceMs?: number }} how `patienceMs`: how long it waits
   *   for a channel to open before it takes one still being set up (default: no time)
   * @returns {Promise<string | null>} the peer whose slot it holds (give it back), or null: aborted, or every candidate dropped
   */
  take (peers, priority, { signal, onBytes, patienceMs = 0 }) {
    return new Promise((resolve) => {
      /** @type {Waiting} */
      const w = { peers, rank: RANK[priority], seq: this.#seq++, until: performance.now() + patienceMs, onBytes, resolve }
      // A free slot has nobody waiting for it that may take it: give() and opened() hand them on at once.
      if (this.#retry(w) || signal.aborted || !peers.length) return resolve(null)
      const at = this.#waiting.findIndex((o) => o.rank > w.rank)
      this.#waiting.splice(at === -1 ? this.#waiting.length : at, 0, w)
      // Patience over: a channel still being set up will do.
      const timer = setTimeout(() => this.#waiting.includes(w) && this.#retry(w), patienceMs)
      signal.addEventListener('abort', () => {
        clearTimeout(timer)
        this.#leave(w, null)
      }, { once: true })
    })
  }

  /**
   * Whether request `w` may take a slot of `peer` (its count aside): an open
   * channel's, or one with no channel yet (its request starts one); one still
   * being set up only once its patience is over and none of its holders is open.
   * @param {Waiting} w
   * @param {string} peer
   */
  #may (w, peer) {
    const state = this.#state
    return state(peer) !== 'opening' || (performance.now() >= w.until && !w.peers.some((p) => state(p) === 'open'))
  }

  /**
   * `w` takes the free slot it may take, open channels first, if there is one.
   * @param {Waiting} w
   * @returns {boolean} whether it did (its promise resolved)
   */
  #retry (w) {
    const has = (/** @type {string} */ p) => (this.#used.get(p) ?? 0) < this.#perPeer
    const free = w.peers.find((p) => this.#state(p) === 'open' && has(p)) ?? w.peers.find((p) => has(p) && this.#may(w, p))
    if (free === undefined) return false
    this.#used.set(free, (this.#used.get(free) ?? 0) + 1)
    this.#leave(w, free)
    return true
  }

  /** @param {string} peer one of its slots is free again: the most urgent request waiting that may take it does */
  give (peer) {
    const w = this.#waiting.find((o) => o.peers.includes(peer) && this.#may(o, peer))
    if (w) return this.#leave(w, peer) // handed on: the count stays
    const n = (this.#used.get(peer) ?? 1) - 1
    if (n > 0) this.#used.set(peer, n)
    else this.#used.delete(peer)
  }

  /** @param {string} peer a channel to it has opened: its free slots go to the most urgent requests waiting for it */
  opened (peer) {
    for (const w of [...this.#waiting]) if (w.peers.includes(peer)) this.#retry(w)
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
    for (const w of this.#waiting) if (w.peers.includes(peer)) w.onBytes()
  }

  /** @param {string} peer dropped: no request waits for it any more (one left with no candidate gets null) */
  drop (peer) {
    this.#heard.delete(peer)
    for (const w of [...this.#waiting]) {
      w.peers = w.peers.filter((p) => p !== peer)
      // What it waited on may have been this one alone: another may do now.
      if (!w.peers.length) this.#leave(w, null)
      else this.#retry(w)
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
