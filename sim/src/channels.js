/**
 * The data channels clients hold open, which is what the policy's
 * `isConnected` sees. A client keeps a channel to every peer it fetched from
 * during its current session; all close when that session ends, and a channel
 * also dies when the other peer's session ends, so each channel remembers
 * which session of the peer it reached. Owners and peers are sessions' slots
 * (online-slots.js): each session's channels are one contiguous list of
 * [peer's slot, peer's session tag].
 */
import { SlabLists } from './slab-lists.js'

/** Open channels of every online session. */
export class ChannelTable {
  constructor () {
    // a session opens a few channels: room for them from the start
    this.lists = new SlabLists(2, 0, 8)
  }

  /** @param {number} n owners (slots) to make room for */
  ensureOwners (n) {
    this.lists.ensureOwners(n)
  }

  /**
   * Closes all of `c`'s channels (its session ended).
   * @param {number} c
   */
  reset (c) {
    this.lists.clear(c)
  }

  /**
   * @param {number} c
   * @param {number} p
   * @returns {number} the session of `p` that `c`'s channel reached, or -1 if `c` has none to `p`
   */
  peerSession (c, p) {
    const lists = this.lists
    const n = lists.length(c)
    if (n === 0) return -1
    const pool = lists.pool
    const base = lists.base(c)
    for (let i = 0; i < n; i++) if (pool[base + i * 2] === p) return pool[base + i * 2 + 1]
    return -1
  }

  /**
   * Records that `c` opened a channel to session `session` of `p` (replacing an older one).
   * @param {number} c
   * @param {number} p
   * @param {number} session
   */
  open (c, p, session) {
    const lists = this.lists
    const n = lists.length(c)
    const base = lists.base(c)
    for (let i = 0; i < n; i++) {
      if (lists.pool[base + i * 2] === p) {
        lists.pool[base + i * 2 + 1] = session
        return
      }
    }
    lists.push(c, p, session)
  }
}
