/**
 * The data channels clients hold open, which is what the policy's
 * `isConnected` sees, and the connections they are still setting up or gave
 * up on. A client keeps a channel to every peer it fetched from during its
 * current peer record's life (a page view's with `--channels page`, else its
 * session's); all close when that ends, and a channel also dies when the other
 * peer's record ends, so each channel remembers which record (page id) of the
 * peer it reached. Owners and peers are sessions' slots (online-slots.js):
 * each owner's channels are one contiguous list of
 * [peer's slot, peer's page id, ready at (float64 over two int32 fields)]:
 * when the channel opens (or opened); +∞ for a peer whose connection failed,
 * which the page passes over from then on.
 */
import { SlabLists } from './slab-lists.js'

/** int32 fields per record: slot, page, and a float64 */
const STRIDE = 4
/** where the float64 `ready at` starts in a record (an even field, so the float is 8-byte aligned) */
const READY = 2

/** Open channels of every online session. */
export class ChannelTable {
  constructor () {
    // a session opens a few channels: room for them from the start
    this.lists = new SlabLists(STRIDE, 0, 8)
    /** the pool, read as float64 (remade when the pool grows) */
    this.f64 = new Float64Array(this.lists.pool.buffer)
  }

  /** @param {number} n owners (slots) to make room for */
  ensureOwners (n) {
    this.lists.ensureOwners(n)
  }

  /**
   * Closes all of `c`'s channels (its page or session ended).
   * @param {number} c
   */
  reset (c) {
    this.lists.clear(c)
  }

  /**
   * @param {number} c
   * @param {number} p
   * @returns {number} the page id of `p` that `c`'s channel reached, or -1 if `c` has none to `p`
   */
  peerSession (c, p) {
    const i = this.find(c, p)
    return i === -1 ? -1 : this.lists.pool[i + 1]
  }

  /**
   * @param {number} c
   * @param {number} p
   * @returns {number} where in the pool `c`'s record for `p` starts, or -1
   */
  find (c, p) {
    const lists = this.lists
    const n = lists.length(c)
    if (n === 0) return -1
    const pool = lists.pool
    const base = lists.base(c)
    for (let i = 0; i < n; i++) if (pool[base + i * STRIDE] === p) return base + i * STRIDE
    return -1
  }

  /**
   * The pool read as float64, current: remade only after the pool grew (a
   * typed array's `buffer` is a getter, too slow to compare on every read).
   * @returns {Float64Array}
   */
  readyView () {
    if (this.f64.length * 2 !== this.lists.pool.length) this.f64 = new Float64Array(this.lists.pool.buffer)
    return this.f64
  }

  /**
   * @param {number} at a record's start in the pool (`find`)
   * @returns {number} when its channel opens (+∞: the connection failed)
   */
  readyAt (at) {
    return this.readyView()[(at + READY) >> 1]
  }

  /**
   * Records that `c` opened (or is opening: `ready` in the future, or failed: +∞)
   * a channel to page `page` of `p`, replacing an older record.
   * @param {number} c
   * @param {number} p
   * @param {number} page
   * @param {number} [ready] when the channel opens
   * @param {number} [at] `find(c, p)`, when the caller has it
   */
  open (c, p, page, ready = -Infinity, at = this.find(c, p)) {
    const lists = this.lists
    if (at === -1) {
      const pos = lists.push(c, p, page) // may move the list: its base is read after
      at = lists.base(c) + pos * STRIDE
    } else {
      lists.pool[at + 1] = page
    }
    this.readyView()[(at + READY) >> 1] = ready
  }
}
