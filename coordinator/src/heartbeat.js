/**
 * Dead-socket detection. Every interval, each socket is judged by what it did
 * since the last round:
 * - it sent something (a message or a pong): alive, nothing to send;
 * - it was silent and has a ping outstanding from the last round: terminated
 *   (its close handler removes the peer from every map);
 * - it was silent with no ping out: pinged.
 * So a busy socket costs no pings at all, and an idle one is pinged once and
 * cut off one round later if it does not answer. A round walks the sockets a
 * slice at a time, yielding between slices, so that pinging tens of thousands
 * of sockets never stalls the replies to everyone else. (A peer's liveness in
 * the store is its shard's: presence.js.)
 */
import { setImmediate as yieldToIo } from 'node:timers/promises'

/** sockets judged before a round yields to the event loop */
const SLICE = 500

export class Heartbeat {
  /**
   * @param {{ intervalMs: number, sessions: () => Iterable<import('./session.js').Session> }} deps
   */
  constructor ({ intervalMs, sessions }) {
    this.intervalMs = intervalMs
    this.sessions = sessions
    /** @type {NodeJS.Timeout | null} */
    this.timer = null
    /** @type {Promise<void> | null} the round under way */
    this.round = null
  }

  start () {
    this.timer = setInterval(() => { this.tick() }, this.intervalMs)
    this.timer.unref()
  }

  /**
   * One round (if one is still under way, that one).
   * @returns {Promise<void>} when every socket has been judged
   */
  tick () {
    this.round ??= this.#walk().finally(() => { this.round = null })
    return this.round
  }

  async #walk () {
    const sessions = [...this.sessions()]
    for (let i = 0; i < sessions.length; i++) {
      if (i > 0 && i % SLICE === 0) await yieldToIo()
      const session = sessions[i]
      if (session.closed) continue
      if (session.heard) {
        session.heard = false
        session.pinged = false
      } else if (session.pinged) {
        session.closeReason = 'ping_timeout'
        session.ws.terminate()
      } else {
        session.pinged = true
        session.ws.ping()
      }
    }
  }

  stop () {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }
}
