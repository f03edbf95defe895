/**
 * Delivers `connect` signals to peers: to a socket on this shard directly, or
 * through the store's bus to the shard that holds the target's socket. The bus
 * also brings reports of this shard's peers from other shards (quarantine.js).
 */
import { isPeerId, isSignal } from './fields.js'

/**
 * The `connect` a signal's target is sent.
 * @param {string} from
 * @param {object} signal
 * @returns {string}
 */
export const relayFrame = (from, signal) => JSON.stringify({ type: 'connect', from, signal, introduced: true })

export class Relay {
  /**
   * @param {{ shard: string, store: import('./store/store.js').Store,
   *   sessions: Map<string, import('./session.js').Session>, counters: Record<string, number>,
   *   onReport: (message: { report?: unknown }) => boolean }} deps
   *   `onReport`: takes a report another shard forwarded (quarantine.js); false when malformed
   */
  constructor ({ shard, store, sessions, counters, onReport }) {
    this.onReport = onReport
    this.shard = shard
    this.store = store
    this.sessions = sessions
    this.counters = counters
    /** @type {(() => Promise<void>) | null} */
    this.unsubscribe = null
  }

  /** Start taking this shard's messages off the bus. */
  async start () {
    this.unsubscribe = await this.store.subscribe(this.shard, (message) => {
      // What another shard published is checked as a client's frame is (anyone
      // who can publish on the bus could have written it), and nothing in here
      // may throw: the store's connection calls this.
      try {
        const { to, from, signal, report } = message !== null && typeof message === 'object' ? /** @type {{ to?: unknown, from?: unknown, signal?: unknown, report?: unknown }} */ (message) : {}
        if (report !== undefined) {
          if (!this.onReport(/** @type {object} */ (message))) this.counters.busRejected++
        } else if (typeof to === 'string' && isPeerId(from) && isSignal(signal)) {
          this.deliverLocal(to, from, /** @type {object} */ (signal))
        } else {
          this.counters.busRejected++
        }
      } catch {
        this.counters.busRejected++
      }
    })
  }

  /**
   * A signal another shard forwarded.
   * @param {string} to
   * @param {string} from
   * @param {object} signal
   * @returns {boolean} whether `to` is on this shard (and got the signal)
   */
  deliverLocal (to, from, signal) {
    return this.deliverFrame(to, from, relayFrame(from, signal))
  }

  /**
   * @param {string} to
   * @param {string} from
   * @param {string} frame the `connect` `to` is sent ({@link relayFrame})
   * @param {number} [now] the sessions' clock, when the caller has just read it (every session has the coordinator's)
   * @returns {boolean} whether `to` is on this shard (and got it)
   */
  deliverFrame (to, from, frame, now) {
    const session = this.sessions.get(to)
    if (session === undefined) return false
    // Its sender was introduced to it (checked where the sender is connected): it may answer.
    session.introduced().add(from, now ?? session.now(), false)
    session.sendText(frame)
    this.counters.relayed++
    return true
  }

  /**
   * @param {string} shard where `to` is connected
   * @param {string} to
   * @param {string} from
   * @param {object} signal
   * @returns {Promise<boolean>} whether a coordinator listens as `shard` (false: it died since its last beat)
   */
  async forward (shard, to, from, signal) {
    const reached = await this.store.publish(shard, { to, from, signal })
    if (reached > 0) this.counters.forwarded++
    return reached > 0
  }

  async stop () {
    await this.unsubscribe?.()
    this.unsubscribe = null
  }
}
