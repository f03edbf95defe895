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
 */

/** Requests one peer's channel carries at once: enough that it always has the next one to read and send. */
export const SLOTS_PER_PEER = 3

/** Waiting requests hear of their holders' bytes at most this often (ms). */
const BUSY_EVERY_MS = 10

/** @type {Record<import('../../policy/hedge-rule.js').Priority, number>} */
const RANK = { blocking: 0, viewport: 1, later: 2 }

/** @typedef {{ peers: string[], rank: number, seq: number, onBytes: () => void, resolve: (peer: string | null) => void }} Waiting */

export class PeerSlots {
  /** @type {number} */
  #perPeer
  /** @type {Map<string, number>} slots in use, by peer */
  #used = new Map()
  /** @type {Waiting[]} most urgent first */
  #waiting = []
  #seq = 0
  /** @type {Map<string, number>} when the requests waiting for each peer last heard of its bytes */
  #heard = new Map()

  /** @type {(peer: string) => boolean} */
  #spare

  /**
   * @param {number} [perPeer]
   * @param {(peer: string) => boolean} [spare] offered each freed slot before the waiting requests:
   *   true when it handed it on (a request held up elsewhere took it: the count stays)
   */
  constructor (perPeer = SLOTS_PER_PEER, spare = () => false) {
    this.#perPeer = perPeer
    this.#spare = spare
  }

  /**
   * A slot on the first of `peers` that has one free, now or once one frees.
   * @param {string[]} peers candidates, preferred first
   * @param {import('../../policy/hedge-rule.js').Priority} priority
   * @param {{ signal: AbortSignal, onBytes: () => void }} how
   * @returns {Promise<string | null>} the peer whose slot it holds (give it back), or null: aborted, or every candidate dropped
   */
  take (peers, priority, { signal, onBytes }) {
    // A free slot has nobody waiting for it: give() hands freed slots on at once.
    const free = peers.find((p) => (this.#used.get(p) ?? 0) < this.#perPeer)
    if (free !== undefined) {
      this.#used.set(free, (this.#used.get(free) ?? 0) + 1)
      return Promise.resolve(free)
    }
    if (signal.aborted || !peers.length) return Promise.resolve(null)
    return new Promise((resolve) => {
      const w = { peers, rank: RANK[priority], seq: this.#seq++, onBytes, resolve }
      const at = this.#waiting.findIndex((o) => o.rank > w.rank)
      this.#waiting.splice(at === -1 ? this.#waiting.length : at, 0, w)
      signal.addEventListener('abort', () => this.#leave(w, null), { once: true })
    })
  }

  /** @param {string} peer one of its slots is free again: a request held up elsewhere (spare), else the most urgent waiting for it, takes it */
  give (peer) {
    if (this.#spare(peer)) return
    const w = this.#waiting.find((o) => o.peers.includes(peer))
    if (w) return this.#leave(w, peer) // handed on: the count stays
    const n = (this.#used.get(peer) ?? 1) - 1
    if (n > 0) this.#used.set(peer, n)
    else this.#used.delete(peer)
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
