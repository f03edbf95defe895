/**
 * The peers one peer may signal: those a lookup of its introduced it to (the
 * holders it was handed), and those that signalled it first under their own
 * introduction (so a holder can answer an offer). Each introduction lasts
 * `ttlMs` from when it was made or last renewed and lets `budgetBytes` of
 * signals through; only the newest `max` are kept. A peer that has never been introduced to
 * anyone costs nothing: a session creates its Introductions on first use.
 */
import { ERRORS, MayghError } from '../../protocol/index.js'

export class Introductions {
  /**
   * @param {{ introductionTtlMs: number, introductionSignalBytes: number, maxIntroductions: number }} limits
   */
  constructor ({ introductionTtlMs, introductionSignalBytes, maxIntroductions }) {
    this.ttlMs = introductionTtlMs
    this.budgetBytes = introductionSignalBytes
    this.max = maxIntroductions
    /**
     * peer → when the introduction ends, the signal bytes it still allows, and
     * whether a lookup of this peer's handed `peer` out (else `peer` signalled first); oldest first
     * @type {Map<string, { until: number, left: number, looked: boolean }>}
     */
    this.peers = new Map()
    /** @type {string | undefined} the key set last: the newest kept, if it is still there */
    this.newest = undefined
  }

  /**
   * Introduce `peer` as of `now`. An introduction still live is renewed: its
   * time starts again and it becomes the newest kept; a lookup that hands
   * `peer` out again also gives it a fresh signal budget (the asker is about
   * to set up a new connection), a signal from `peer` does not.
   * @param {string} peer
   * @param {number} now ms, monotonic
   * @param {boolean} looked a lookup of this peer's named `peer` (false: `peer` signalled this one first)
   */
  add (peer, now, looked) {
    if (!this.renew(peer, now, looked)) this.insert(peer, now, looked)
  }

  /**
   * Introduce `peer` again if this peer has an entry for it, live or expired, as `add` does.
   * @param {string} peer
   * @param {number} now
   * @param {boolean} looked
   * @returns {boolean} false when it has none (nothing done)
   */
  renew (peer, now, looked) {
    const known = this.peers.get(peer)
    if (known === undefined) return false
    const live = known.until > now
    known.left = live && !looked ? known.left : this.budgetBytes
    known.looked = looked || (live && known.looked)
    known.until = now + this.ttlMs
    // Renewed: the newest kept (a Map keeps the order entries were set in); already so for a
    // run of signals from one peer, which then costs no reordering.
    if (this.newest !== peer) {
      this.peers.delete(peer)
      this.peers.set(peer, known)
      this.newest = peer
    }
    return true
  }

  /**
   * Introduce `peer`, which this peer has no entry for, as `add` does.
   * @param {string} peer
   * @param {number} now
   * @param {boolean} looked
   */
  insert (peer, now, looked) {
    if (this.peers.size >= this.max) this.peers.delete(/** @type {string} */ (this.peers.keys().next().value))
    this.peers.set(peer, { until: now + this.ttlMs, left: this.budgetBytes, looked })
    this.newest = peer
  }

  /**
   * Whether a lookup of this peer's introduced `peer` (what a report needs: a
   * peer that merely signalled this one cannot be reported by it).
   * @param {string} peer
   * @param {number} now
   */
  looked (peer, now) {
    const known = this.peers.get(peer)
    return known !== undefined && known.until > now && known.looked
  }

  /**
   * Take `bytes` of signal to `peer` from its introduction's budget.
   * @param {string} peer
   * @param {number} bytes
   * @param {number} now
   * @throws {MayghError} MGH_ERR_NOT_INTRODUCED (none, or expired), MGH_ERR_SIGNAL_BUDGET
   */
  spend (peer, bytes, now) {
    const known = this.peers.get(peer)
    if (known === undefined || known.until <= now) {
      this.peers.delete(peer)
      throw new MayghError(ERRORS.MGH_ERR_NOT_INTRODUCED, peer)
    }
    if (bytes > known.left) throw new MayghError(ERRORS.MGH_ERR_SIGNAL_BUDGET, `${bytes} bytes > ${known.left} left of ${this.budgetBytes}`)
    known.left -= bytes
  }
}
