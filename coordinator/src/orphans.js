/**
 * Peers the store may list though no session has them: a removal the store
 * failed, or a join that failed (which may have listed its peer or not). Kept
 * to remove again after the next beat that succeeds (presence.js `tidy`), so no
 * gone peer stays listed; past MAX_ORPHANS, one may stay listed until its
 * shard restarts.
 */
import { PEER_BATCH } from './store/redis-store.js'

/** removals kept to retry while the store is down */
const MAX_ORPHANS = 100_000

export class Orphans {
  /**
   * @param {object} deps
   * @param {Pick<import('./store/store.js').Store, 'removePeer'>} deps.store
   * @param {(err: Error, context: string) => void} deps.warn
   */
  constructor ({ store, warn }) {
    this.store = store
    this.warn = warn
    /** @type {Map<string, readonly string[]>} peer id → the store keys it may be listed under */
    this.waiting = new Map()
  }

  /**
   * A peer to remove once the store answers.
   * @param {string} id
   * @param {readonly string[]} assets its store keys
   */
  add (id, assets) {
    if (this.waiting.size < MAX_ORPHANS) this.waiting.set(id, assets)
  }

  /**
   * Take a peer out of the store; when the store fails, keep it to retry.
   * @param {string} id
   * @param {readonly string[]} assets its store keys
   */
  async remove (id, assets) {
    try {
      await this.store.removePeer(id, assets)
      this.waiting.delete(id)
    } catch (err) {
      this.warn(/** @type {Error} */ (err), `removing peer ${id} failed; retried after the next beat`)
      this.add(id, assets)
    }
  }

  /** Retry the removals the store failed, a batch at a time (the oldest first). */
  async retry () {
    /** @type {Promise<void>[]} */
    const batch = []
    for (const [id, assets] of this.waiting) {
      if (batch.length === PEER_BATCH) break
      batch.push(this.remove(id, assets))
    }
    await Promise.all(batch)
  }
}
